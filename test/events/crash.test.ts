import type { ChildProcess } from 'node:child_process';
import { kill9, spawnWorkerProcess } from '../support/worker-process.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/world.ts';
import { adminEndpoints } from '../../services/events/endpoint-ops.ts';
import type { WebhookOptions } from '../../services/events/settings.ts';
import { storeDeliveries, wakeActor } from '../../services/events/deliveries.ts';
import { BATCH_ROUNDS } from '../../services/events/pass.ts';
import { endpointActorId } from '../../workflows/contracts/endpoint-actor.ts';
import { call, emit, siteDb, startReceiver, startWebhookWorld } from './support.ts';
import { eventually } from '../support/polling.ts';

const createEndpoint = adminEndpoints.create;
const webhooks: WebhookOptions = {
  retry: { initialIntervalMs: 500, backoffCoefficient: 2, maximumIntervalMs: 4_000, maximumAttempts: 6 },
  attemptTimeoutMs: 20_000,
  heartbeatTimeoutMs: 2_000,
  drainIntervalMs: 1_000,
};

const spawnWorker = (world: World) =>
  spawnWorkerProcess(world.config, { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_TEST_OPTIONS: JSON.stringify(webhooks) }, 60_000);

describe('a worker killed with SIGKILL in the middle of a delivery', () => {
  let world: World;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    world = await startWebhookWorld({ webhooks }); // no in-process worker: only the child processes work
  });
  afterAll(async () => {
    for (const child of children) await kill9(child);
    await world?.close();
  });

  it('is retried by the next worker: the receiver sees it completed and every attempt is in the history', async () => {
    // The first request is held open; the worker dies while waiting for the answer.
    const receiver = await startReceiver((_req, index) => ({ delayMs: index === 0 ? 30_000 : 0 }));
    try {
      const first = await spawnWorker(world);
      children.push(first);
      const { endpoint } = await call(world, createEndpoint, { name: 'crash', url: receiver.url, events: ['content.created'] });
      await emit(world, 'content.created', { id: 'c1', type: 'post', slug: 'a', locale: 'en', title: 'A', status: 'draft', authorId: null });
      await eventually(async () => receiver.received.length === 1, 'first request', 30_000);
      const { deliveries, historyOf } = await siteDb(world);
      const inFlight = await deliveries.findOne({ endpointId: endpoint.id });
      expect(inFlight?.status).toBe('pending');
      expect(await historyOf(inFlight!._id)).toHaveLength(0); // attempt 1 has no outcome yet

      await kill9(first);
      const second = await spawnWorker(world);
      children.push(second);

      const done = await eventually(
        async () => {
          const row = await deliveries.findOne({ _id: inFlight!._id });
          return row?.status === 'delivered' && row;
        },
        'delivery after the crash',
        45_000,
      );
      expect(done.attempts).toBe(2);
      expect(receiver.received).toHaveLength(2);
      // Same delivery id on both attempts: the receiver can tell it is the same delivery.
      expect(receiver.received.map((r) => r.headers['x-service-delivery'])).toEqual([done._id, done._id]);
      expect(receiver.received.map((r) => r.headers['x-service-attempt'])).toEqual(['1', '2']);
      const history = await historyOf(done._id);
      expect(history.map((h) => [h.attempt, h.status])).toEqual([
        [1, 'interrupted'],
        [2, 'succeeded'],
      ]);
      expect(history[1].responseCode).toBe(200);
    } finally {
      await receiver.close();
    }
  }, 120_000);

  it('loses nothing when the worker is SIGKILLed mid-burst: an independent receiver counts every id', async () => {
    for (const child of children) await kill9(child);
    const receiver = await startReceiver(() => ({ delayMs: 100 }));
    try {
      children.push(await spawnWorker(world));
      const { endpoint } = await call(world, createEndpoint, { name: 'burst', url: receiver.url, events: ['media.uploaded'], concurrency: 4 });
      const EVENTS = 60;
      await Promise.all(
        Array.from({ length: EVENTS }, (_, i) => emit(world, 'media.uploaded', { id: `m${i}`, filename: 'a.png', mimeType: 'image/png', size: 1, url: '/a' })),
      );
      await eventually(async () => receiver.received.length >= 10, 'the burst under way', 30_000);
      await kill9(children.at(-1)!);
      const { deliveries } = await siteDb(world);
      expect(await deliveries.countDocuments({ endpointId: endpoint.id, status: 'pending' })).toBeGreaterThan(0);
      children.push(await spawnWorker(world));

      await eventually(
        async () => (await deliveries.countDocuments({ endpointId: endpoint.id, status: 'delivered' })) === EVENTS,
        'the burst after the crash',
        60_000,
      );
      const stored = new Set((await deliveries.find({ endpointId: endpoint.id }).toArray()).map((row) => row._id));
      const got = receiver.received.map((r) => String(r.headers['x-service-delivery']));
      expect(new Set(got)).toEqual(stored); // zero lost
      // A repeat is only what the dead worker had taken in its batch (BATCH_ROUNDS × the concurrency of 4 at most), with the same id.
      expect(got.length - stored.size).toBeLessThanOrEqual(BATCH_ROUNDS * 4);
    } finally {
      await receiver.close();
    }
  }, 120_000);

  it('re-queues at worker start, at once, every stored delivery whose actor is not running, and starts no second actor for one that is', async () => {
    for (const child of children) await kill9(child); // no worker running: only the next boot can pick them up
    const orphanReceiver = await startReceiver();
    const runningReceiver = await startReceiver();
    try {
      const { ctx, deliveries } = await siteDb(world);
      const where = { workspaceId: ctx.workspace._id, dbName: ctx.workspace.dbName, siteId: ctx.site._id };
      // A delivery whose process died between the insert and the wake: stored, no actor.
      const { endpoint: orphanEndpoint } = await call(world, createEndpoint, { name: 'orphan', url: orphanReceiver.url, events: ['user.updated'] });
      const body = JSON.stringify({ id: 'evt', event: 'user.updated', data: { id: 'u1', email: 'a@b.test', role: 'editor' } });
      const [orphan] = await storeDeliveries(world.services, where, [{ _id: orphanEndpoint.id }], 'user.updated', body);
      // A delivery whose actor was started (it waits for a worker): the boot must not start another.
      const { endpoint: runningEndpoint } = await call(world, createEndpoint, { name: 'running', url: runningReceiver.url, events: ['user.updated'] });
      const [queued] = await storeDeliveries(world.services, where, [{ _id: runningEndpoint.id }], 'user.updated', body);
      await wakeActor(world.services, where, runningEndpoint.id);
      const actor = world.services.temporal.client.workflow.getHandle(endpointActorId(ctx.workspace._id, runningEndpoint.id));
      const before = await actor.describe();
      expect(before.status.name).toBe('RUNNING');
      expect((await deliveries.findOne({ _id: orphan._id }))?.status).toBe('pending');

      children.push(await spawnWorker(world));
      const booted = Date.now();
      const done = await eventually(
        async () => {
          const row = await deliveries.findOne({ _id: orphan._id });
          return row?.status === 'delivered' && row;
        },
        'the orphan delivered after boot',
        30_000,
      );
      // At once: no grace period for young rows (the old drain waited 30 s, then up to a minute).
      expect(Date.now() - booted).toBeLessThan(10_000);
      expect(done.attempts).toBe(1);
      expect(orphanReceiver.received.map((r) => r.headers['x-service-delivery'])).toEqual([orphan._id]);
      expect(orphanReceiver.received[0].body).toBe(body);

      await eventually(async () => (await deliveries.findOne({ _id: queued._id }))?.status === 'delivered', 'the queued delivery', 30_000);
      expect((await actor.describe()).runId).toBe(before.runId); // the same actor run, not a second one
      expect(runningReceiver.received.map((r) => r.headers['x-service-delivery'])).toEqual([queued._id]);
    } finally {
      await orphanReceiver.close();
      await runningReceiver.close();
    }
  }, 120_000);
});
