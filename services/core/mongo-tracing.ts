import { createRequire } from 'node:module';
import { context, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';

/** What the driver's connection class offers that these spans need: one method per command sent. */
interface DriverConnection {
  address: string;
  command(ns: { db: string; collection?: string }, command: Record<string, unknown>, ...rest: unknown[]): Promise<unknown>;
}

/** Marks the driver's connection class once it is wrapped (a second process setup in the same process wraps nothing more). */
const WRAPPED = Symbol.for('cwb.mongodb.traced');

/**
 * A client span per MongoDB command (OpenTelemetry database semantic conventions), made around the
 * driver's one method that sends a command (`Connection.prototype.command`, driver 6), the way the
 * OpenTelemetry MongoDB instrumentation does it. Only inside a recorded span: a command with no
 * active span (the change feed's poll, a periodic pass) would start a trace of one span every few
 * milliseconds, and under an unsampled request a child would not be kept either (parent-based
 * sampling); such a command costs one test of the active context.
 *
 * Why not the driver's command monitoring: monitoring is per client, not per command, so every
 * command of the process would build its started and succeeded events (each reply decoded a second
 * time for the event) to serve the one request in a thousand (by default) that is traced: 10–16 %
 * of a write's CPU (bench/RESULTS.md, session 12, at one in a hundred).
 *
 * Returns false when the driver no longer has that method (a major version moved it): the process
 * then runs without MongoDB spans, and the suite's trace test fails.
 */
export function traceMongoCommands(tracer: Tracer): boolean {
  const require = createRequire(import.meta.url);
  const { Connection } = require('mongodb/lib/cmap/connection.js') as { Connection?: { prototype: DriverConnection & { [WRAPPED]?: true } } };
  const prototype = Connection?.prototype;
  if (typeof prototype?.command !== 'function') return false;
  if (prototype[WRAPPED]) return true;
  const send = prototype.command;
  prototype[WRAPPED] = true;
  prototype.command = function tracedCommand(this: DriverConnection, ns, command, ...rest) {
    const parent = context.active();
    if (!trace.getSpan(parent)?.isRecording()) return send.call(this, ns, command, ...rest);
    const name = Object.keys(command)[0];
    const target = command[name];
    const collection = typeof target === 'string' ? target : undefined;
    const span = tracer.startSpan(
      collection ? `${name} ${collection}` : name,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'db.system.name': 'mongodb',
          'db.operation.name': name,
          'db.namespace': ns.db,
          ...(collection ? { 'db.collection.name': collection } : {}),
          'server.address': this.address,
        },
      },
      parent,
    );
    return send.call(this, ns, command, ...rest).then(
      (reply) => {
        span.end();
        return reply;
      },
      (error: unknown) => {
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
        span.end();
        throw error;
      },
    );
  };
  return true;
}
