import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/world.ts';
import { adminEndpoints } from '../../services/events/endpoint-ops.ts';
import { deliveryWorkflowId } from '../../services/events/deliveries.ts';
import type { DeliveryDoc } from '../../services/events/model.ts';
import { newId } from '../../services/core/ids.ts';
import type { DeliveryWorkflowInput } from '../../workflows/delivery.ts';
import { call, siteDb, startReceiver, startWebhookWorld } from './support.ts';
import { eventually } from '../support/polling.ts';

/** A row exactly as the per-delivery design stored it (no `via`, no `nextAttemptAt`). */
function legacyRow(siteId: string, endpointId: string, body: string): DeliveryDoc {
  const now = new Date();
  return { _id: newId(), siteId, endpointId, event: 'user.created', body, status: 'pending', attempts: 0, responseCode: null, error: null, redeliveryOf: null, createdAt: now, updatedAt: now, finishedAt: null };
}

describe('upgrade from one workflow per delivery to one actor per endpoint', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWebhookWorld({ worker: true });
  });
  afterAll(() => world?.close());

  it('hands a stored delivery without a running workflow to the actor, and lets a running old workflow finish alone', async () => {
    const receiver = await startReceiver((req) => ({ delayMs: JSON.parse(req.body).data.id === 'running' ? 1_500 : 0 }));
    try {
      const { endpoint } = await call(world, adminEndpoints.create, { name: 'upgrade', url: receiver.url, events: ['user.created'] });
      const { ctx, deliveries, historyOf } = await siteDb(world);
      const orphan = legacyRow(ctx.site._id, endpoint.id, JSON.stringify({ id: 'e1', event: 'user.created', data: { id: 'orphan' } }));
      const running = legacyRow(ctx.site._id, endpoint.id, JSON.stringify({ id: 'e2', event: 'user.created', data: { id: 'running' } }));
      await deliveries.insertOne(orphan);
      // The old design's workflow for one of them, started as the old publisher did.
      const input: DeliveryWorkflowInput = {
        dbName: ctx.workspace.dbName,
        siteId: ctx.site._id,
        deliveryId: running._id,
        retry: { initialIntervalMs: 1_000, backoffCoefficient: 2, maximumIntervalMs: 4_000, maximumAttempts: 6 },
        attemptTimeoutMs: 10_000,
        heartbeatTimeoutMs: 5_000,
      };
      await world.services.temporal.client.workflow.start('deliveryWorkflow', {
        taskQueue: world.services.temporal.taskQueue,
        workflowId: deliveryWorkflowId(running._id),
        args: [input],
      });
      // Stored right after the start (its first attempt needs a workflow task first), so the
      // drain never sees it without its workflow running.
      await deliveries.insertOne(running);

      const done = await eventually(async () => {
        const rows = await deliveries.find({ _id: { $in: [orphan._id, running._id] } }).toArray();
        return rows.length === 2 && rows.every((row) => row.status === 'delivered') && rows;
      }, 'both legacy deliveries', 40_000);
      const byId = new Map(done.map((row) => [row._id, row]));
      expect(byId.get(orphan._id)?.via).toBe('endpoint'); // taken over by the actor
      expect(byId.get(running._id)?.via).toBeUndefined(); // finished by its own workflow, never adopted
      // Each sent exactly once, with its own id; each attempt in the history.
      const ids = receiver.received.map((r) => String(r.headers['x-service-delivery'])).sort();
      expect(ids).toEqual([orphan._id, running._id].sort());
      // The old workflow writes a row per attempt, the actor a batch document: the history reads both.
      expect((await historyOf(orphan._id)).map((h) => h.status)).toEqual(['succeeded']);
      expect((await historyOf(running._id)).map((h) => h.status)).toEqual(['succeeded']);
    } finally {
      await receiver.close();
    }
  }, 60_000);
});
