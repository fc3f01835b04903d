import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Span,
  type TextMapGetter,
  type Tracer,
} from '@opentelemetry/api';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { Services } from '../core/context.ts';
import type { Operation } from '../core/operation.ts';
import { statusClass, type HistogramSeries } from '../core/metrics.ts';
import { activeTraceFields, logTraceFlags, NO_TRACE_FIELDS } from '../core/tracing.ts';

/** Where a request was answered: Fastify's full path, or one of the lanes in front of it (lane-server.ts). */
export type Lane = 'full' | 'public-cache' | 'manage-held';

/**
 * The surface label of a route that is no operation (the extensions): named by its path, so the
 * label stays one of a handful of values.
 */
export function routeSurface(route: string | undefined): string {
  if (route === undefined) return 'unmatched';
  if (route.startsWith('/api/mcp')) return 'mcp';
  if (route.startsWith('/api/v1/graphql')) return 'graphql';
  if (route.startsWith('/oauth') || route.startsWith('/.well-known')) return 'oauth';
  if (route.startsWith('/admin')) return 'admin-ui';
  if (route.startsWith('/media')) return 'media';
  if (route === '/healthz' || route === '/livez' || route === '/readyz') return 'health';
  if (route.startsWith('/api/manage/v1')) return 'manage';
  if (route.startsWith('/api/comments/v1')) return 'comments';
  if (route.startsWith('/api/v1')) return 'public';
  if (route.startsWith('/api')) return 'admin';
  return 'other';
}

/**
 * The full path's request metric and span name: one `onResponse` hook (Fastify's own timing) and,
 * traced, one `onRequest` hook naming the request span after its route (`GET /api/v1/entries`).
 * The operation label is the operation's id, or the route pattern for a route that is none.
 */
export function installRequestTelemetry(app: FastifyInstance, services: Services): void {
  const { requestDuration } = services.metrics;
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url;
    const operation = request.routeOptions.config?.operation;
    requestDuration.observe(
      {
        surface: operation?.surface ?? routeSurface(route),
        operation: operation?.id ?? route ?? 'unmatched',
        status_class: statusClass(reply.statusCode),
        lane: 'full',
      },
      reply.elapsedTime / 1000,
    );
    done();
  });
  if (services.tracing.enabled)
    app.addHook('onRequest', (request, _reply, done) => {
      nameRequestSpan(request.method, request.routeOptions.url);
      done();
    });
}

/** Names the active request span after its route (the OpenTelemetry HTTP server span name). */
export function nameRequestSpan(method: string, route: string | undefined): void {
  const span = trace.getActiveSpan();
  if (!span?.isRecording() || route === undefined) return;
  span.updateName(`${method} ${route}`);
  span.setAttribute('http.route', route);
}

/**
 * A lane's request metric: the series of each operation and status class bound on first use, so
 * recording an answer is a map read and an addition.
 */
export function laneRecorder(services: Services, lane: Exclude<Lane, 'full'>) {
  const { requestDuration } = services.metrics;
  const byOperation = new Map<Operation, HistogramSeries[]>();
  return (operation: Operation, status: number, seconds: number): void => {
    let classes = byOperation.get(operation);
    if (!classes) {
      classes = [];
      byOperation.set(operation, classes);
    }
    const index = (status / 100) | 0;
    (classes[index] ??= requestDuration.bind({ surface: operation.surface, operation: operation.id, status_class: statusClass(status), lane })).observe(
      seconds,
    );
  };
}

const headerGetter: TextMapGetter<IncomingMessage['headers']> = {
  keys: (headers) => Object.keys(headers),
  get: (headers, key) => headers[key],
};

/**
 * The server span of one request, continuing the caller's W3C `traceparent` when it sends one.
 * The attributes are only built for a span that is recorded (one in a thousand by default).
 */
function startRequestSpan(tracer: Tracer, request: IncomingMessage, route?: string) {
  const parent = request.headers.traceparent === undefined ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, request.headers, headerGetter);
  const span = tracer.startSpan(spanName(request, route), { kind: SpanKind.SERVER }, parent);
  describeRequest(span, request, route);
  return { span, parent };
}

const spanName = (request: IncomingMessage, route?: string) => (route ? `${request.method ?? 'GET'} ${route}` : (request.method ?? 'GET'));

function describeRequest(span: Span, request: IncomingMessage, route?: string): void {
  if (span.isRecording()) span.setAttributes(requestAttributes(request, route));
}

/** The HTTP server span's attributes (OpenTelemetry HTTP semantic conventions). */
function requestAttributes(request: IncomingMessage, route?: string): Attributes {
  const url = request.url ?? '/';
  const query = url.indexOf('?');
  return {
    'http.request.method': request.method ?? 'GET',
    'url.path': query === -1 ? url : url.slice(0, query),
    'url.scheme': 'http',
    'network.peer.address': request.socket.remoteAddress,
    ...(route ? { 'http.route': route } : {}),
  };
}

function endRequestSpan(span: Span, status: number): void {
  if (!span.isRecording()) return;
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/**
 * Traced: runs Fastify's dispatch inside a server span, so everything the request does (its MongoDB
 * commands, the Temporal calls, its log lines) happens in that span's context. A request the
 * sampler dropped that continues no caller's trace gets no context, like a lane's (nothing under it
 * would be kept, and a context costs the process a hook per promise: `Tracing.holdContext`).
 * Untraced: null, and the server dispatches as it always did.
 */
export function requestSpans(services: Services): ((request: IncomingMessage, response: ServerResponse, dispatch: () => void) => void) | null {
  const { tracing } = services;
  if (!tracing.enabled) return null;
  return (request, response, dispatch) => {
    const { span, parent } = startRequestSpan(tracing.tracer, request);
    if (!span.isRecording() && request.headers.traceparent === undefined) return dispatch();
    const release = tracing.holdContext(trace.setSpan(parent, span), dispatch);
    response.once('close', () => {
      endRequestSpan(span, response.statusCode);
      // After Fastify's own 'close' work (its "request completed" line is written in the context).
      setImmediate(release);
    });
  };
}

/**
 * Traced: the logger of a request Fastify answers, with its span's ids among its bindings. Fastify
 * makes it inside the request's span (`requestSpans`), so every line the request logs through it
 * carries them, and Fastify's logger needs no mixin asking for the active span on every line: the
 * cache lanes write their access lines through Fastify's logger, with their own trace fields
 * (`laneLogLine`), and with a mixin each of them paid for a context lookup that found nothing.
 * A request outside any span (999 in 1,000 by default) gets Fastify's own child.
 */
export const tracedRequestLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) => {
  const fields = activeTraceFields();
  return logger.child(fields === NO_TRACE_FIELDS ? bindings : { ...bindings, ...fields }, options);
};

/** A lane answer's trace: its ids for the access-log line, and the span's end. */
export interface LaneTrace {
  readonly traceId: string;
  readonly spanId: string;
  /** `logTraceFlags` of the trace. */
  readonly traceFlags: string;
  end(status: number): void;
}

/**
 * A lane answer's access-log line (the full path's "request completed"): one shape whether or not
 * the answer is traced, the trace fields undefined (pino leaves them out) when it is not. The one in
 * a hundred lines of another shape made the logger's serialization slower for every line after
 * (bench/RESULTS.md, session 12).
 */
export function laneLogLine(reqId: string, statusCode: number, responseTime: number, trace: LaneTrace | undefined) {
  return {
    reqId,
    res: { statusCode },
    responseTime,
    trace_id: trace?.traceId,
    span_id: trace?.spanId,
    trace_flags: trace?.traceFlags,
  };
}

/**
 * A lane's trace, around an answer sent from memory without entering a context (a context costs
 * the lanes more than their answer). A request without a `traceparent` has its sampling decided
 * before anything is built (`drawRootTrace`: one random draw): when the sampler
 * drops it (999 in 1,000 by default) there is nothing at all, no span and no trace fields in its log
 * line (undefined; docs/observability.md, "Trace ids in the logs"). A sampled one, or one continuing
 * a caller's `traceparent`, gets its server span and the span's ids in its log line.
 * Untraced: null.
 */
export function laneSpans(services: Services) {
  const { tracing } = services;
  if (!tracing.enabled) return null;
  // The route is the surface's prefix and the operation's path, joined only for a trace that is kept.
  return (request: IncomingMessage, prefix: string, path: string): LaneTrace | undefined => {
    if (request.headers.traceparent === undefined) {
      const traceId = tracing.drawRootTrace();
      if (traceId === undefined) return undefined;
      const route = prefix + path;
      const spanId = tracing.newSpanId();
      const startedAt = performance.now();
      const end = (status: number) =>
        tracing.recordRoot({
          traceId,
          spanId,
          name: spanName(request, route),
          startedAt,
          endedAt: performance.now(),
          attributes: { ...requestAttributes(request, route), 'http.response.status_code': status },
          failed: status >= 500,
        });
      return { traceId, spanId, traceFlags: logTraceFlags(TraceFlags.SAMPLED), end };
    }
    const { span } = startRequestSpan(tracing.tracer, request, prefix + path);
    const { traceId, spanId, traceFlags } = span.spanContext();
    return { traceId, spanId, traceFlags: logTraceFlags(traceFlags), end: (status) => endRequestSpan(span, status) };
  };
}
