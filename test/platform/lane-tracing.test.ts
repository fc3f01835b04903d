import { randomBytes } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { context, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { defaultPayloadConverter, type Headers } from '@temporalio/common';
import { SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { socketGet } from '../support/listening-gateway.ts';
import { eventually } from '../support/polling.ts';
import { startOtlpReceiver } from '../support/otlp-receiver.ts';
import { laneSpans, requestSpans, type LaneTrace } from '../../services/http/request-telemetry.ts';
import { workflowClientTracing } from '../../services/core/temporal-tracing.ts';

// The cache lanes under tracing (docs/observability.md, "Traces"): a request without a
// `traceparent` has its sampling decided by one draw before anything is built, so one the sampler
// drops makes no span and logs no trace fields; a kept one is a span on a trace id the sampler keeps;
// a caller's `traceparent` is continued whatever the ratio. One in two kept here, so both happen.
const RATIO = 0.5;
const ROUTE = '/api/v1/content';

let world: World;
let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
let port = 0;

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  // The SDK's exporter reads the standard variables itself (services/core/tracing.ts); this file runs in a process of its own.
  Object.assign(process.env, {
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: String(RATIO),
  });
  world = await startWorld();
  await world.app.listen({ port: 0, host: '127.0.0.1' });
  port = (world.app.server.address() as { port: number }).port;
});
afterAll(async () => {
  await world?.close();
  await otlp?.close();
});

/** A lane's request as the HTTP server hands it over (no connection behind it). */
function laneRequest(headers: Record<string, string> = {}): IncomingMessage {
  const request = new IncomingMessage(new Socket());
  request.method = 'GET';
  request.url = `${ROUTE}?limit=2`;
  request.headers = { host: 'localhost', ...headers };
  return request;
}

const flushed = async () => world.services.tracing.spanProcessor!.forceFlush();

describe('cache lanes under tracing', () => {
  it('decides sampling before building a span: a dropped request has no span and no trace fields, a kept one is a span on the trace id the sampler chose', async () => {
    expect(world.services.tracing.enabled).toBe(true);
    const lane = laneSpans(world.services)!;
    const answers = Array.from({ length: 64 }, () => lane(laneRequest(), '/api/v1', '/content'));
    const kept = answers.filter((answer): answer is LaneTrace => answer !== undefined);
    // Binomial(64, 0.5): outside 9..55 once in ten million runs.
    expect(kept.length).toBeGreaterThan(8);
    expect(kept.length).toBeLessThan(56);

    // The configured ratio, a function of the trace id, keeps exactly the ids the lane kept.
    const ratio = new TraceIdRatioBasedSampler(RATIO);
    for (const answer of kept) {
      expect(answer).toMatchObject({
        traceId: expect.stringMatching(/^[0-9a-f]{32}$/),
        spanId: expect.stringMatching(/^[0-9a-f]{16}$/),
        traceFlags: '01',
      });
      expect(ratio.shouldSample(ROOT_CONTEXT, answer.traceId).decision).toBe(SamplingDecision.RECORD_AND_SAMPLED);
      answer.end(200);
    }
    await flushed();
    const keptIds = new Set(kept.map((answer) => answer.traceId));
    const exported = await eventually(() => {
      const ofLane = otlp.spans.filter((span) => keptIds.has(span.traceId));
      return ofLane.length === kept.length && ofLane;
    }, 'the kept lane spans');
    for (const span of exported)
      expect(span).toMatchObject({
        name: `GET ${ROUTE}`,
        kind: 2,
        parentSpanId: '',
        attributes: { 'http.route': ROUTE, 'url.path': ROUTE, 'http.response.status_code': 200 },
      });
  });

  it("continues a caller's traceparent whatever the ratio: an unsampled one is logged with the caller's trace id and not exported, a sampled one is exported as the caller's child", async () => {
    const lane = laneSpans(world.services)!;
    const unsampledTrace = randomBytes(16).toString('hex');
    const caller = randomBytes(8).toString('hex');
    const unsampled = lane(laneRequest({ traceparent: `00-${unsampledTrace}-${caller}-00` }), '/api/v1', '/content');
    expect(unsampled).toMatchObject({ traceId: unsampledTrace, traceFlags: '00' });
    expect(unsampled?.spanId).not.toBe(caller);
    unsampled!.end(200);

    // Over a socket, so the answer really comes from the lane in front of Fastify.
    const sampledTrace = randomBytes(16).toString('hex');
    const read = () => socketGet(port, `${ROUTE}?limit=2`, { traceparent: `00-${sampledTrace}-${caller}-01` });
    expect((await read()).statusCode).toBe(200);
    const answeredBefore = world.app.publicLane.answered;
    await eventually(async () => (await read()).statusCode === 200 && world.app.publicLane.answered > answeredBefore, 'a cache-lane answer');
    await flushed();
    const spans = await eventually(() => {
      const ofTrace = otlp.spans.filter((span) => span.traceId === sampledTrace && span.name === `GET ${ROUTE}`);
      return ofTrace.length >= 2 && ofTrace;
    }, 'the full-path and lane spans of the sampled trace');
    for (const span of spans) expect(span).toMatchObject({ parentSpanId: caller, kind: 2, attributes: { 'http.response.status_code': 200 } });
    expect(otlp.spans.some((span) => span.traceId === unsampledTrace)).toBe(false);
  });
});

describe('the full path under tracing', () => {
  it('runs a kept request in its span through its awaits, and a dropped one in no context at all', async () => {
    const spans = requestSpans(world.services)!;
    const seen: { kept: boolean; during?: boolean; afterAwait?: boolean }[] = [];
    const responses: ServerResponse[] = [];
    for (let i = 0; i < 64; i++) {
      const request = laneRequest();
      const response = new ServerResponse(request);
      responses.push(response);
      const record: (typeof seen)[number] = { kept: false };
      seen.push(record);
      let settled!: Promise<void>;
      spans(request, response, () => {
        const active = trace.getActiveSpan();
        record.kept = active?.isRecording() ?? false;
        record.during = active !== undefined;
        settled = (async () => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          record.afterAwait = trace.getActiveSpan() !== undefined;
        })();
      });
      await settled;
    }
    for (const response of responses) response.emit('close');
    const kept = seen.filter((r) => r.kept);
    expect(kept.length).toBeGreaterThan(8);
    expect(kept.length).toBeLessThan(56);
    for (const record of seen) expect(record).toEqual({ kept: record.kept, during: record.kept, afterAwait: record.kept });
  });

  it("tells the workflow of a call made outside any trace that it is not sampled, and carries a kept request's span", async () => {
    const interceptor = workflowClientTracing(world.services.tracing);
    const headersOf = async (): Promise<string> => {
      let sent: Headers = {};
      await interceptor.signal!({ headers: {}, signalName: 'wake', args: [], workflowExecution: { workflowId: 'w' } } as never, async (input) => {
        sent = input.headers;
      });
      return (defaultPayloadConverter.fromPayload(sent['_tracer-data']) as { traceparent: string }).traceparent;
    };
    expect(await headersOf()).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    const traceId = randomBytes(16).toString('hex');
    const parent = trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: randomBytes(8).toString('hex'), traceFlags: TraceFlags.SAMPLED, isRemote: true });
    const traceparent = await context.with(parent, headersOf);
    expect(traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
  });
});
