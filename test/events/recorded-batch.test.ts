import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/world.ts';
import { adminEndpoints } from '../../services/events/endpoint-ops.ts';
import { deliveryHistoryOp } from '../../services/events/delivery-ops.ts';
import { storeDeliveries, wakeActor } from '../../services/events/deliveries.ts';
import { newId } from '../../services/core/ids.ts';
import { call, siteDb, startReceiver, startWebhookWorld } from './support.ts';
import { eventually } from '../support/polling.ts';

describe('a pass that died after recording its batch history', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWebhookWorld({ worker: true });
  });
  afterAll(() => world?.close());

  it('takes the outcomes from the recorded batch instead of sending again; only what it did not record is interrupted', async () => {
    const receiver = await startReceiver();
    try {
      const { endpoint } = await call(world, adminEndpoints.create, { name: 'recorded', url: receiver.url, events: ['user.created'] });
      const { ctx, deliveries, endpoints, attemptBatches, historyOf } = await siteDb(world);
      const where = { workspaceId: ctx.workspace._id, dbName: ctx.workspace.dbName, siteId: ctx.site._id };
      const body = JSON.stringify({ id: 'evt', event: 'user.created', data: { id: 'u1' } });
      const store = async () => (await storeDeliveries(world.services, where, [{ _id: endpoint.id }], 'user.created', body))[0];
      // What a pass leaves when it dies between the batch's history and the rows' outcomes:
      // `sent` was delivered and recorded, `unsent` was taken but left out (the batch stopped
      // early), `cut` was in flight and never recorded.
      const sent = await store();
      const unsent = await store();
      const cut = await store();
      const batch = newId();
      const at = new Date();
      await attemptBatches.insertOne({
        _id: newId(),
        siteId: ctx.site._id,
        endpointId: endpoint.id,
        batch,
        unsent: [unsent._id],
        attempts: [
          {
            id: newId(),
            deliveryId: sent._id,
            event: 'user.created',
            attempt: 1,
            status: 'succeeded',
            responseCode: 200,
            error: null,
            startedAt: at,
            finishedAt: at,
            durationMs: 0,
          },
        ],
      });
      await endpoints.updateOne(
        { _id: endpoint.id },
        { $set: { inflight: [sent, unsent, cut].map((row) => ({ id: row._id, attempt: 1 })), inflightBatch: batch } },
      );

      await wakeActor(world.services, where, endpoint.id);
      const rows = await eventually(
        async () => {
          const found = await deliveries.find({ _id: { $in: [sent._id, unsent._id, cut._id] } }).toArray();
          return found.length === 3 && found.every((row) => row.status === 'delivered') && new Map(found.map((row) => [row._id, row]));
        },
        'the three deliveries',
        30_000,
      );

      // Not sent again: its outcome came from the recorded batch.
      expect(rows.get(sent._id)?.attempts).toBe(1);
      expect((await historyOf(sent._id)).map((h) => [h.attempt, h.status])).toEqual([[1, 'succeeded']]);
      // Never sent by the dead pass: its first attempt now, nothing interrupted.
      expect(rows.get(unsent._id)?.attempts).toBe(1);
      expect((await historyOf(unsent._id)).map((h) => [h.attempt, h.status])).toEqual([[1, 'succeeded']]);
      // Cut off unrecorded: interrupted, then sent again with the same id.
      expect(rows.get(cut._id)?.attempts).toBe(2);
      expect((await historyOf(cut._id)).map((h) => [h.attempt, h.status])).toEqual([
        [1, 'interrupted'],
        [2, 'succeeded'],
      ]);
      const got = receiver.received.map((r) => [r.headers['x-service-delivery'], r.headers['x-service-attempt']]);
      expect(got.sort()).toEqual(
        [
          [unsent._id, '1'],
          [cut._id, '2'],
        ].sort(),
      );

      // The administrators' history lists every attempt once, newest first, from both storages.
      const { data } = await call(world, deliveryHistoryOp, { endpointId: endpoint.id });
      expect(data.map((h) => [h.deliveryId, h.attempt, h.status]).sort()).toEqual(
        [
          [sent._id, 1, 'succeeded'],
          [unsent._id, 1, 'succeeded'],
          [cut._id, 1, 'interrupted'],
          [cut._id, 2, 'succeeded'],
        ].sort(),
      );
      const ids = data.map((h) => h.id);
      expect(ids).toEqual([...ids].sort().reverse());
    } finally {
      await receiver.close();
    }
  }, 60_000);
});
