import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { World } from '../support/world.ts';
import { adminEndpoints } from '../../services/events/endpoint-ops.ts';
import { deliveryWorkflowId, legacyDeliveryWorkflowType } from '../../services/events/legacy-deliveries.ts';
import { openRetiredRuns, reportRetiredRuns } from '../../services/retired-workflows.ts';
import { drainDeliveries } from '../../services/events/recovery.ts';
import type { DeliveryDoc } from '../../services/events/model.ts';
import { newId } from '../../services/core/ids.ts';
import { call, siteDb, startReceiver, startWebhookWorld } from './support.ts';
import { eventually } from '../support/polling.ts';

/** A row exactly as the per-delivery design stored it (no `via`, no `nextAttemptAt`). */
function legacyRow(siteId: string, endpointId: string, body: string): DeliveryDoc {
  const now = new Date();
  return {
    _id: newId(),
    siteId,
    endpointId,
    event: 'user.created',
    body,
    status: 'pending',
    attempts: 0,
    responseCode: null,
    error: null,
    redeliveryOf: null,
    createdAt: now,
    updatedAt: now,
    finishedAt: null,
  };
}

describe('rows and runs left by the retired one-workflow-per-delivery design', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWebhookWorld({ worker: true });
  });
  afterAll(() => world?.close());

  it('hands a stored delivery without an open run to the actor, and leaves one whose old run is open until that run is gone', async () => {
    const receiver = await startReceiver();
    const { client, taskQueue } = world.services.temporal;
    let openRunId: string | null = null;
    try {
      const { endpoint } = await call(world, adminEndpoints.create, { name: 'upgrade', url: receiver.url, events: ['user.created'] });
      const { ctx, deliveries, historyOf } = await siteDb(world);
      const orphan = legacyRow(ctx.site._id, endpoint.id, JSON.stringify({ id: 'e1', event: 'user.created', data: { id: 'orphan' } }));
      const stuck = legacyRow(ctx.site._id, endpoint.id, JSON.stringify({ id: 'e2', event: 'user.created', data: { id: 'stuck' } }));
      // A run of the old design left open across the upgrade: started by its type name, which no
      // worker of this version registers, so it cannot move (its workflow tasks fail).
      openRunId = deliveryWorkflowId(stuck._id);
      await client.workflow.start(legacyDeliveryWorkflowType, { taskQueue, workflowId: openRunId, args: [{ deliveryId: stuck._id }] });
      await deliveries.insertMany([orphan, stuck]);

      // The worker's start check: the drain condition fails, logged as an error naming the run.
      const logged = vi.spyOn(world.services.log, 'error');
      const isOpen = async () => (await openRetiredRuns(world.services)).some((run) => run.workflowId === openRunId);
      expect(await eventually(isOpen, 'the open run seen through visibility', 10_000)).toBe(true);
      await reportRetiredRuns(world.services);
      expect(logged).toHaveBeenCalledWith(
        expect.objectContaining({ type: legacyDeliveryWorkflowType, workflowId: openRunId }),
        expect.stringContaining('retired workflow'),
      );
      logged.mockRestore();

      // The orphan is taken over by the actor and delivered; the row whose run is open is not touched.
      const delivered = await eventually(
        async () => {
          const row = await deliveries.findOne({ _id: orphan._id });
          return row?.status === 'delivered' && row;
        },
        'the orphan delivered',
        30_000,
      );
      expect(delivered.via).toBe('endpoint');
      await drainDeliveries(world.services);
      const waiting = await deliveries.findOne({ _id: stuck._id });
      expect(waiting).toMatchObject({ status: 'pending', attempts: 0 });
      expect(waiting?.via).toBeUndefined();
      expect(receiver.received.map((r) => String(r.headers['x-service-delivery']))).toEqual([orphan._id]);

      // Terminated by the operator: the drain hands its row to the actor, which sends it once.
      await client.workflow.getHandle(openRunId).terminate('retired workflow');
      const terminated = deliveryWorkflowId(stuck._id);
      openRunId = null;
      await eventually(
        async () => (await deliveries.findOne({ _id: stuck._id }))?.status === 'delivered',
        'the stuck row delivered after the terminate',
        30_000,
      );
      expect(receiver.received.map((r) => String(r.headers['x-service-delivery'])).sort()).toEqual([orphan._id, stuck._id].sort());
      expect(
        await eventually(async () => !(await openRetiredRuns(world.services)).some((run) => run.workflowId === terminated), 'no open run left', 10_000),
      ).toBe(true);
      expect((await historyOf(orphan._id)).map((h) => h.status)).toEqual(['succeeded']);
      expect((await historyOf(stuck._id)).map((h) => h.status)).toEqual(['succeeded']);
    } finally {
      if (openRunId)
        await client.workflow
          .getHandle(openRunId)
          .terminate('test over')
          .catch(() => undefined);
      await receiver.close();
    }
  }, 60_000);
});
