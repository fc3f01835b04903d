import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/world.ts';
import { adminEndpoints, manageEndpoints } from '../../services/events/endpoint-ops.ts';
import { deliveryHistoryOp } from '../../services/events/delivery-ops.ts';
import { endpointActorId } from '../../workflows/contracts/endpoint-actor.ts';
import { call, emit, failure, keyPrincipal, siteDb, storeKey, startReceiver, startWebhookWorld } from './support.ts';
import { eventually } from '../support/polling.ts';

const createEndpoint = adminEndpoints.create;

/** A loopback port nobody listens on: every attempt is refused at once (a dead receiver). */
async function deadUrl(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/hook`;
}

describe('one delivery actor per endpoint', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWebhookWorld({ worker: true, webhooks: { breakerMs: 3_000 } });
  });
  afterAll(() => world?.close());

  it('delivers a burst to several endpoints while one is dead and one hangs: the others are unaffected', async () => {
    const live = await Promise.all([startReceiver(), startReceiver(), startReceiver()]);
    const hanging = await startReceiver(() => ({ delayMs: 10_000 }));
    const dead = await deadUrl();
    try {
      const ids: string[] = [];
      for (const [i, receiver] of live.entries()) {
        ids.push((await call(world, createEndpoint, { name: `live ${i}`, url: receiver.url, events: ['content.published'] })).endpoint.id);
      }
      const deadId = (await call(world, createEndpoint, { name: 'dead', url: dead, events: ['content.published'] })).endpoint.id;
      const hangingId = (await call(world, createEndpoint, { name: 'hanging', url: hanging.url, events: ['content.published'], concurrency: 2 })).endpoint.id;
      const started = Date.now();
      const EVENTS = 40;
      await Promise.all(Array.from({ length: EVENTS }, (_, seq) => emit(world, 'content.published', { id: `e${seq}`, seq })));

      const { deliveries, historyTo, ctx } = await siteDb(world);
      await eventually(
        async () => (await deliveries.countDocuments({ endpointId: { $in: ids }, status: 'delivered' })) === EVENTS * ids.length,
        'live deliveries',
        30_000,
      );
      const elapsed = Date.now() - started;
      // The hanging endpoint needs 60 s for one round of attempts (40 × 3 s timeout, two at a time);
      // the live ones finish long before, on a busy shared machine included.
      expect(elapsed).toBeLessThan(25_000);
      for (const [i, receiver] of live.entries()) {
        const got = receiver.received.map((r) => String(r.headers['x-service-delivery']));
        const stored = (await deliveries.find({ endpointId: ids[i] }).toArray()).map((row) => row._id);
        expect(new Set(got)).toEqual(new Set(stored)); // none lost
        expect(got).toHaveLength(EVENTS); // none doubled
      }
      // The dead endpoint's deliveries wait for their retries; the hanging one holds at most 2 requests.
      const deadRows = await deliveries.find({ endpointId: deadId }).toArray();
      expect(deadRows).toHaveLength(EVENTS);
      expect(deadRows.every((row) => row.status !== 'delivered')).toBe(true);
      expect((await historyTo(deadId)).some((attempt) => attempt.status === 'failed' && /connection failed/.test(attempt.error ?? ''))).toBe(true);
      // A batch that failed entirely holds the dead endpoint until its first retry probes it again:
      // at most that first batch and, on a slow machine where the retry came before the live
      // deliveries finished, one probe batch (each sends only its first 2 × the default concurrency
      // of 8 while nothing succeeds) have been tried;
      // the rest waits untried (the breaker, 3 s here, pauses it before more runs out of attempts).
      expect(deadRows.filter((row) => row.attempts === 0).length).toBeGreaterThanOrEqual(EVENTS - 2 * 16);
      // Never three of its requests within one attempt timeout (3 s, less arrival jitter): two at a time.
      const times = hanging.received.map((r) => r.at).sort((a, b) => a - b);
      expect(times.length).toBeGreaterThanOrEqual(2);
      for (let i = 2; i < times.length; i++) expect(times[i] - times[i - 2]).toBeGreaterThanOrEqual(2_000);
      expect(await deliveries.countDocuments({ endpointId: hangingId, status: 'delivered' })).toBe(0);

      // Temporal cost: one actor's whole history is far shorter than its delivery count.
      const history = await world.services.temporal.client.workflow.getHandle(endpointActorId(ctx.workspace._id, ids[0])).fetchHistory();
      expect(history.events?.length ?? 0).toBeLessThan(EVENTS);
    } finally {
      await Promise.all([...live, hanging].map((r) => r.close()));
    }
  }, 60_000);

  it("keeps to the endpoint's concurrency and deliveries per second", async () => {
    let inFlight = 0;
    let most = 0;
    const slow = await startReceiver(() => {
      inFlight++;
      most = Math.max(most, inFlight);
      setTimeout(() => inFlight--, 300);
      return { delayMs: 300 };
    });
    const paced = await startReceiver();
    try {
      await call(world, createEndpoint, { name: 'two at a time', url: slow.url, events: ['media.uploaded'], concurrency: 2 });
      await call(world, createEndpoint, { name: 'five per second', url: paced.url, events: ['media.uploaded'], maxPerSecond: 5 });
      await Promise.all(
        Array.from({ length: 10 }, (_, i) => emit(world, 'media.uploaded', { id: `m${i}`, filename: 'a.png', mimeType: 'image/png', size: 1, url: '/a' })),
      );
      await eventually(async () => slow.received.length === 10 && paced.received.length === 10, 'both receivers', 30_000);
      expect(most).toBe(2);
      // Ten starts at five per second: nine gaps of 200 ms between the first and the last (1.8 s,
      // less arrival jitter); unpaced, ten local requests take a few milliseconds.
      const times = paced.received.map((r) => r.at).sort((a, b) => a - b);
      expect(times.at(-1)! - times[0]).toBeGreaterThanOrEqual(1_500);
    } finally {
      await slow.close();
      await paced.close();
    }
  }, 60_000);

  it('refuses out-of-range endpoint settings with 400 and stores nothing', async () => {
    const { endpoints } = await siteDb(world);
    const before = await endpoints.countDocuments();
    for (const bad of [{ concurrency: 0 }, { concurrency: 33 }, { maxPerSecond: 0 }, { concurrency: 1.5 }]) {
      const result = await failure(call(world, createEndpoint, { name: 'bad', url: 'http://127.0.0.1:1/x', events: ['media.deleted'], ...bad }));
      expect(result.status).toBe(400);
      expect(result.error).toMatch(/concurrency|maxPerSecond/);
    }
    expect(await endpoints.countDocuments()).toBe(before);
  });

  it('pauses an endpoint that failed every attempt for the breaker period, tells its owner, and resumes on request', async () => {
    let healthy = false;
    const receiver = await startReceiver(() => ({ status: healthy ? 200 : 503 }));
    const announced: Array<Record<string, unknown>> = [];
    const unhook = world.services.hooks.addAction('webhook.endpointPaused', (args) => void announced.push(args));
    try {
      await storeKey(world, 'key-breaker');
      const key = keyPrincipal('key-breaker');
      const { endpoint } = await call(world, manageEndpoints.create, { name: 'breaker', url: receiver.url, events: ['user.created'] }, key);
      await emit(world, 'user.created', { id: 'u1', email: 'a@b.test', role: 'editor' });
      const { endpoints, deliveries } = await siteDb(world);
      const paused = await eventually(
        async () => {
          const row = await endpoints.findOne({ _id: endpoint.id });
          return row?.pausedAt && row;
        },
        'the breaker',
        30_000,
      );
      expect(paused.pauseReason).toMatch(/every attempt failed for 3 s/);
      // (Endpoints of the other tests whose receivers are gone trip it too: only this one's entry counts.)
      // The pass writes the pause, then the history entry, then announces it: wait for the last step.
      await eventually(async () => announced.some((a) => a.endpointId === endpoint.id), 'the announcement', 10_000);
      expect(announced.filter((a) => a.endpointId === endpoint.id)).toEqual([expect.objectContaining({ name: 'breaker' })]);
      // The owner sees it: in the endpoint list (its key) and in the delivery history.
      const listed = await call(world, manageEndpoints.list, {}, key);
      expect(listed.data.find((e) => e.id === endpoint.id)?.pausedAt).toBe(paused.pausedAt!.toISOString());
      const history = await call(world, deliveryHistoryOp, { endpointId: endpoint.id });
      expect(history.data[0]).toMatchObject({ status: 'paused', attempt: 0 });

      // While paused nothing is sent, even for new events; they wait.
      await emit(world, 'user.created', { id: 'u2', email: 'b@b.test', role: 'editor' });
      const sent = receiver.received.length;
      await new Promise((r) => setTimeout(r, 2_000));
      expect(receiver.received.length).toBe(sent);
      expect(await deliveries.countDocuments({ endpointId: endpoint.id, status: 'pending' })).toBe(2);

      // Another key cannot resume it (404, nothing changed); its owner can, and what waited goes out.
      expect((await failure(call(world, manageEndpoints.resume, { id: endpoint.id }, keyPrincipal('key-other')))).status).toBe(404);
      expect((await endpoints.findOne({ _id: endpoint.id }))?.pausedAt).toBeTruthy();
      healthy = true;
      const resumed = await call(world, manageEndpoints.resume, { id: endpoint.id }, key);
      expect(resumed.endpoint.pausedAt).toBeNull();
      const done = await eventually(
        async () => {
          const rows = await deliveries.find({ endpointId: endpoint.id }).toArray();
          return rows.every((row) => row.status === 'delivered') && rows;
        },
        'deliveries after the resume',
        20_000,
      );
      expect(done).toHaveLength(2);
      const events = new Set(receiver.received.filter((r) => r.headers['x-service-attempt'] && healthy).map((r) => JSON.parse(r.body).data.id));
      expect(events).toEqual(new Set(['u1', 'u2']));
    } finally {
      unhook();
      await receiver.close();
    }
  }, 60_000);
});
