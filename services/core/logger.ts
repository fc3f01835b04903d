import type { LoggerOptions } from 'pino';
import { redactLogLine } from './log-redaction.ts';
import { activeTraceFields, NO_TRACE_FIELDS } from './tracing.ts';

/**
 * `traced`: every line written inside a span carries its trace and span ids (docs/observability.md),
 * asked of the active context line by line (the services' logger; Fastify's request loggers carry
 * them as bindings instead: http/request-telemetry.ts). A line outside any span merges nothing:
 * pino's own merge would copy the line's fields into a new object every time. Secrets are replaced
 * before anything is written (log-redaction.ts), in a line's fields and in the logger's own bindings.
 */
export function loggerOptions(level: string, traced = false): LoggerOptions {
  return {
    level,
    formatters: { log: redactLogLine, bindings: redactLogLine },
    ...(traced
      ? { mixin: activeTraceFields, mixinMergeStrategy: (line: object, fields: object) => (fields === NO_TRACE_FIELDS ? line : Object.assign(fields, line)) }
      : {}),
  };
}
