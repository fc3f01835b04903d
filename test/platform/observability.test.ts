import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { createApiKey } from '../support/access.ts';
import { eventually } from '../support/polling.ts';
import { startOtlpReceiver } from '../support/otlp-receiver.ts';
import { startReceiver } from '../events/support.ts';
import { caller, operatorKey } from './support.ts';
import { CAPABILITIES } from '../../services/core/capabilities.ts';
import { WORKER_NODE_FLAGS } from '../../scripts/worker-node-flags.mjs';
import { readFileSync } from 'node:fs';
import { createMetrics } from '../../services/core/metrics.ts';
import { startEntry as startProcess, stopEntry, worldEnv, type Running } from '../support/entry-process.ts';

const children: ChildProcess[] = [];
const startEntry = (entry: string, env: Record<string, string>, ready: string[], flags: readonly string[] = []) =>
  startProcess(children, [...flags, '--import', 'tsx', entry], env, ready);

/** Every label value of a Prometheus exposition. */
const labelValues = (text: string) => [...text.matchAll(/\w+="((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]);
const labelNames = (text: string) => [...new Set([...text.matchAll(/[{,](\w+)="/g)].map((m) => m[1]))];

describe('metrics and traces of the gateway and worker processes', { timeout: 300_000 }, () => {
  let world: World;
  let gateway: Running;
  let worker: Running;
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let hooks: Awaited<ReturnType<typeof startReceiver>>;
  let base: string;

  beforeAll(async () => {
    world = await startWorld({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    otlp = await startOtlpReceiver();
    hooks = await startReceiver();
    const env = {
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      PORT: '0',
      ...worldEnv(world),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
      OTEL_TRACES_SAMPLER: 'parentbased_always_on',
      // Spans leave within a tenth of a second, not the SDK's five.
      OTEL_BSP_SCHEDULE_DELAY: '100',
    };
    // The gateway exports OTLP/JSON, the worker the default OTLP/protobuf: the receiver decodes both.
    [gateway, worker] = await Promise.all([
      startEntry('services/gateway.ts', { ...env, METRICS_PORT: '0', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, [
        'gateway listening',
        'gateway metrics listening',
      ]),
      startEntry('services/worker.ts', { ...env, WORKER_METRICS_PORT: '0' }, ['worker running', 'worker metrics listening'], WORKER_NODE_FLAGS),
    ]);
    base = gateway.line('gateway listening').address as string;
  });

  afterAll(async () => {
    await Promise.all(children.map(stopEntry));
    await otlp?.close();
    await hooks?.close();
    await world?.close();
  });

  it('one trace holds the request, its MongoDB calls, the Temporal client, the workflow, the activity and the webhook request; its log lines carry the trace id; both listeners serve bounded series', async () => {
    const { key, id: keyId } = await createApiKey(world, { capabilities: [...CAPABILITIES] });
    const bearer = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const endpoint = await fetch(`${base}/api/manage/v1/webhooks`, {
      method: 'POST',
      headers: bearer,
      body: JSON.stringify({ name: 'observed', url: hooks.url, events: ['content.created'] }),
    });
    expect(endpoint.status, await endpoint.clone().text()).toBe(201);
    const endpointId = (await endpoint.json()).endpoint.id as string;

    // The caller's W3C trace context is continued: the request span is its child.
    const traceId = randomBytes(16).toString('hex');
    const callerSpan = randomBytes(8).toString('hex');
    const created = await fetch(`${base}/api/manage/v1/content`, {
      method: 'POST',
      headers: { ...bearer, traceparent: `00-${traceId}-${callerSpan}-01` },
      body: JSON.stringify({ title: 'Observed', slug: 'observed', status: 'published' }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const entryId = (await created.json()).id as string;
    const reqId = created.headers.get('x-request-id');
    await eventually(() => hooks.received.length >= 1, 'the webhook delivery', 60_000);

    const spans = await eventually(
      () => {
        const ofTrace = otlp.spans.filter((s) => s.traceId === traceId);
        const names = new Set(ofTrace.map((s) => s.name));
        return ['POST /api/manage/v1/content', 'StartActivity:deliverPending', 'RunActivity:deliverPending', 'POST'].every((n) => names.has(n)) && ofTrace;
      },
      'the request and delivery spans',
      60_000,
    );
    const request = spans.find((s) => s.name === 'POST /api/manage/v1/content')!;
    expect(request).toMatchObject({ service: 'cwb-gateway', parentSpanId: callerSpan, kind: 2 });
    expect(request.attributes).toMatchObject({ 'http.route': '/api/manage/v1/content', 'http.response.status_code': 201 });
    // MongoDB commands of the request, the Temporal client call, the workflow: all in the one trace.
    expect(spans.some((s) => s.service === 'cwb-gateway' && s.attributes['db.system.name'] === 'mongodb')).toBe(true);
    expect(spans.some((s) => s.service === 'cwb-gateway' && s.name.startsWith('SignalWithStartWorkflow'))).toBe(true);
    // The workflow's spans (exported through its sink; its run span ends with the run) link the client call to the activity.
    const client = spans.find((s) => s.name === 'SignalWithStartWorkflow:endpointActorWorkflow')!;
    expect(spans.find((s) => s.name === 'HandleSignal:wake')).toMatchObject({ service: 'cwb-worker', parentSpanId: client.spanId });
    const scheduled = spans.find((s) => s.name === 'StartActivity:deliverPending')!;
    expect(scheduled.service).toBe('cwb-worker');
    const activity = spans.find((s) => s.name === 'RunActivity:deliverPending')!;
    expect(activity).toMatchObject({ service: 'cwb-worker', parentSpanId: scheduled.spanId });
    const post = spans.find((s) => s.name === 'POST' && s.service === 'cwb-worker')!;
    expect(post).toMatchObject({ kind: 3, parentSpanId: activity.spanId, attributes: { 'url.full': hooks.url, 'http.response.status_code': 200 } });
    expect(spans.some((s) => s.service === 'cwb-worker' && s.attributes['db.system.name'] === 'mongodb')).toBe(true);
    // The receiver is told nothing of the trace.
    expect(hooks.received[0].headers.traceparent).toBeUndefined();
    expect([...otlp.encodings].sort()).toEqual(['application/json', 'application/x-protobuf']);

    // Every log line of the request carries its trace id.
    const requestLines = gateway.lines().filter((l) => l.reqId === reqId);
    expect(requestLines.length).toBeGreaterThan(0);
    for (const line of requestLines) expect(line).toMatchObject({ trace_id: traceId });

    // The public list, twice: the second answer comes from the cache-hit lane, which logs and counts too.
    for (let i = 0; i < 3; i++) expect((await fetch(`${base}/api/v1/content`)).status).toBe(200);
    const laneRequest = await fetch(`${base}/api/v1/content`);
    const laneLine = await eventually(() => gateway.lines().find((l) => l.reqId === laneRequest.headers.get('x-request-id')), 'the lane log line');
    expect(laneLine.trace_id).toMatch(/^[0-9a-f]{32}$/);

    // A rate limit's refusal and a quota's refusal, each counted once.
    const limited = await createApiKey(world, { capabilities: [...CAPABILITIES], rateLimitPerMin: 1 });
    const statuses: number[] = [];
    for (let i = 0; i < 2; i++) statuses.push((await fetch(`${base}/api/manage/v1/content`, { headers: { authorization: `Bearer ${limited.key}` } })).status);
    expect(statuses).toContain(429);
    const call = caller(world, await operatorKey(world).then((k) => () => k));
    const siteId = (await call('GET', `/tenants/${world.defaultWorkspace.id}`)).json().sites[0].id as string;
    expect((await call('PUT', `/sites/${siteId}/quotas`, { quotas: { entries: 1 } })).statusCode).toBe(200);
    await eventually(
      async () =>
        (
          await fetch(`${base}/api/manage/v1/content`, {
            method: 'POST',
            headers: bearer,
            body: JSON.stringify({ title: 'Over', slug: `over-${randomBytes(3).toString('hex')}` }),
          })
        ).status === 403,
      'the entries quota refusal',
    );

    const gatewayMetrics = gateway.line('gateway metrics listening').address as string;
    const scrape = await fetch(`${gatewayMetrics}/metrics`);
    expect(scrape.headers.get('content-type')).toContain('text/plain');
    const text = await scrape.text();
    expect(text).toMatch(/http_server_request_duration_seconds_count\{surface="manage",operation="content.create",status_class="2xx",lane="full"\} 1/);
    expect(text).toMatch(
      /http_server_request_duration_seconds_count\{surface="public",operation="public.content.list",status_class="2xx",lane="public-cache"\} [1-9]/,
    );
    expect(text).toMatch(
      /http_server_request_duration_seconds_bucket\{surface="public",operation="public.content.list",status_class="2xx",lane="full",le="0.0001"\}/,
    );
    expect(text).toMatch(/cwb_rate_limit_refusals_total\{surface="manage"\} 1/);
    expect(text).toMatch(/cwb_quota_refusals_total\{quota="entries"\} [1-9]/);
    expect(text).toMatch(/cwb_cache_lookups_total\{cache="public-response",result="miss"\} [1-9]/);
    expect(text).toMatch(/cwb_change_feed_lag_seconds_count [1-9]/);
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);

    const workerText = await eventually(async () => {
      const body = await (await fetch(`${worker.line('worker metrics listening').address as string}/metrics`)).text();
      return /cwb_webhook_deliveries_total\{outcome="delivered"\} 1/.test(body) && body;
    }, 'the delivery on the worker metrics');
    expect(workerText).toMatch(/^cwb_webhook_queue_depth \d+/m);
    expect(workerText).toMatch(/^cwb_webhook_oldest_pending_age_seconds \d+/m);
    expect(workerText).toMatch(/^# TYPE cwb_export_runs_total counter/m);
    expect(workerText).toMatch(/^# TYPE cwb_lifecycle_steps_total counter/m);
    // The Temporal SDK's own worker series, merged into the same scrape.
    expect(workerText).toMatch(/^temporal_\w+/m);

    // Bounded labels: no workspace, site, key, endpoint or entry id anywhere in either scrape.
    // (The default workspace is called `default`, like Temporal's namespace label: its site's id stands for it.)
    const ids = [world.defaultWorkspace.id, siteId, keyId, limited.id, endpointId, entryId].filter((id) => id !== 'default');
    expect(ids.length).toBeGreaterThanOrEqual(5);
    for (const body of [text, workerText]) {
      expect(labelNames(body).filter((name) => /workspace|tenant|site|key|entry|endpoint|delivery/i.test(name))).toEqual([]);
      const values = labelValues(body);
      for (const id of ids) {
        expect(values).not.toContain(id);
        expect(body).not.toContain(id);
      }
    }
    // Anything but GET /metrics is refused.
    expect((await fetch(`${gatewayMetrics}/api/v1/content`)).status).toBe(404);
  });

  it('the Grafana dashboard charts only series the processes serve', async () => {
    const dashboard = JSON.parse(readFileSync('deploy/grafana/cwb-overview.json', 'utf8')) as { panels: { targets?: { expr: string }[] }[] };
    const exprs = dashboard.panels.flatMap((panel) => panel.targets ?? []).map((target) => target.expr);
    expect(exprs.length).toBeGreaterThan(20);
    const ours = new Set(
      createMetrics()
        .registry.getMetricsAsArray()
        .map((metric) => metric.name),
    );
    const used = new Set(exprs.flatMap((expr) => [...expr.matchAll(/\b((?:cwb|http_server)_\w+?)(?:_bucket|_count|_sum)?(?!\w)/g)].map((m) => m[1])));
    expect(used.size).toBeGreaterThan(8);
    for (const name of used) expect(ours, name).toContain(name);
  });
});
