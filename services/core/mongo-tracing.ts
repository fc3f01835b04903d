import { context, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import type { CommandFailedEvent, CommandStartedEvent, CommandSucceededEvent, MongoClient } from 'mongodb';

/**
 * A client span per MongoDB command, from the driver's command monitoring (OpenTelemetry database
 * semantic conventions). Only inside a recorded span: a command with no active span (the change
 * feed's poll, a periodic pass) would start a trace of one span every few milliseconds, and under
 * an unsampled request a child would not be kept either (parent-based sampling).
 */
export function traceMongoCommands(client: MongoClient, tracer: Tracer): void {
  const open = new Map<string, Span>();
  const keyOf = (event: { connectionId?: string | number; requestId: number }) => `${event.connectionId}/${event.requestId}`;
  client.on('commandStarted', (event: CommandStartedEvent) => {
    const parent = context.active();
    if (!trace.getSpan(parent)?.isRecording()) return;
    const target = event.command[event.commandName];
    const collection = typeof target === 'string' ? target : undefined;
    const span = tracer.startSpan(
      collection ? `${event.commandName} ${collection}` : event.commandName,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'db.system.name': 'mongodb',
          'db.operation.name': event.commandName,
          'db.namespace': event.databaseName,
          ...(collection ? { 'db.collection.name': collection } : {}),
          'server.address': event.address,
        },
      },
      parent,
    );
    open.set(keyOf(event), span);
  });
  const end = (event: CommandSucceededEvent | CommandFailedEvent, failure?: Error) => {
    const key = keyOf(event);
    const span = open.get(key);
    if (!span) return;
    open.delete(key);
    if (failure) span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
    span.end();
  };
  client.on('commandSucceeded', (event: CommandSucceededEvent) => end(event));
  client.on('commandFailed', (event: CommandFailedEvent) => end(event, event.failure));
}
