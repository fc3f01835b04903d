import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kill9, spawnWorkerProcess } from '../support/worker-process.ts';
import type { World } from '../support/world.ts';
import { adminEndpoints } from '../../services/events/endpoint-ops.ts';
import { call, emit, siteDb, startReceiver, startWebhookWorld } from './support.ts';
import { eventually } from '../support/polling.ts';

// Production settings (no test-sized timeouts): the bound is the defaults' (docs/webhooks.md).
const DEFAULTS = { retry: undefined, attemptTimeoutMs: undefined, heartbeatTimeoutMs: undefined, drainIntervalMs: undefined };
const BOUND_MS = 5000;

const spawnWorker = (world: World) => spawnWorkerProcess(world.config, { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }, 90_000);

describe('deliveries owed when a worker is SIGKILLed start within 5 s on a worker that polls', () => {
  let world: World;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    world = await startWebhookWorld({ webhooks: DEFAULTS }); // no in-process worker: only the child processes work
  });
  afterAll(async () => {
    for (const child of children) await kill9(child);
    await world?.close();
  });

  it('a delivery in flight on the dead worker, and an event emitted to an actor the dead worker held', async () => {
    // The first request is held open: the worker dies while it waits for the answer.
    const receiver = await startReceiver((_req, index) => ({ delayMs: index === 0 ? 60_000 : 0 }));
    try {
      const first = await spawnWorker(world);
      children.push(first);
      const { endpoint } = await call(world, adminEndpoints.create, { name: 'restart', url: receiver.url, events: ['content.created'] });
      await emit(world, 'content.created', { id: 'c1', type: 'post', slug: 'a', locale: 'en', title: 'A', status: 'draft', authorId: null });
      await eventually(async () => receiver.received.length === 1, 'first request', 30_000);

      // Killed mid-attempt, then a new worker starts: the delivery is sent again within the bound of
      // its first poll (and within seconds of the kill: it was 34 s, a 30 s heartbeat timeout).
      await kill9(first);
      const killed = Date.now();
      const second = await spawnWorker(world);
      children.push(second);
      const polling = Date.now();
      await eventually(async () => receiver.received.length === 2, 'the delivery again after the restart', 30_000, 20);
      const restartedIn = Date.now() - polling;
      expect(restartedIn, `sent again ${restartedIn} ms after the new worker polled, ${Date.now() - killed} ms after the kill`).toBeLessThan(BOUND_MS);
      const { deliveries, historyOf } = await siteDb(world);
      const done = await eventually(async () => {
        const row = await deliveries.findOne({ endpointId: endpoint.id });
        return row?.status === 'delivered' && row;
      }, 'delivered');
      expect((await historyOf(done._id)).map((h) => [h.attempt, h.status])).toEqual([
        [1, 'interrupted'],
        [2, 'succeeded'],
      ]);

      // The actor now waits for work on the second worker, which dies in turn with an event owed
      // (emitted just after the kill): the next worker delivers it within the bound of its first
      // poll, though the actor's next workflow task went to the dead worker's sticky queue.
      await new Promise((resolve) => setTimeout(resolve, 4000)); // the pass ends (it lingers 2 s)
      await kill9(second);
      await emit(world, 'content.created', { id: 'c2', type: 'post', slug: 'b', locale: 'en', title: 'B', status: 'draft', authorId: null });
      const third = await spawnWorker(world);
      children.push(third);
      const thirdPolling = Date.now();
      await eventually(async () => receiver.received.length === 3, 'the event owed at the restart', 30_000, 20);
      const deliveredIn = Date.now() - thirdPolling;
      expect(deliveredIn, `delivered ${deliveredIn} ms after the new worker polled`).toBeLessThan(BOUND_MS);
      expect(JSON.parse(receiver.received[2].body).data.id).toBe('c2');
    } finally {
      await receiver.close();
    }
  }, 240_000);
});
