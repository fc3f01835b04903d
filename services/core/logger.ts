import type { LoggerOptions } from 'pino';
import { activeTraceFields, NO_TRACE_FIELDS } from './tracing.ts';

/** Paths that can carry secrets; pino replaces them before anything is written. */
export const redactedPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.secret',
  '*.key',
  '*.secretHash',
  '*.token',
  'headers.authorization',
  'headers.cookie',
];

/**
 * `traced`: every line written inside a span carries its trace and span ids (docs/observability.md).
 * A line outside any span (the cache lanes' access lines among them) merges nothing: pino's own
 * merge would copy the line's fields into a new object every time.
 */
export function loggerOptions(level: string, traced = false): LoggerOptions {
  return {
    level,
    redact: { paths: redactedPaths, censor: '[redacted]' },
    ...(traced
      ? { mixin: activeTraceFields, mixinMergeStrategy: (line: object, fields: object) => (fields === NO_TRACE_FIELDS ? line : Object.assign(fields, line)) }
      : {}),
  };
}
