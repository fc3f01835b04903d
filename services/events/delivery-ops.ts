import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { BadRequestError, NotFoundError } from '../core/errors.ts';
import { eventCollections } from './model.ts';
import { storeDeliveries, wakeActor } from './deliveries.ts';
import { latestAttempts } from './history.ts';

const HISTORY_SIZE = 100;

const AttemptView = z.object({
  id: z.string(),
  deliveryId: z.string(),
  endpointId: z.string(),
  event: z.string(),
  attempt: z.number(),
  status: z.string(),
  responseCode: z.number().nullable(),
  error: z.string().nullable(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  durationMs: z.number().nullable(),
});

export const deliveryHistoryOp = defineOperation({
  id: 'admin.webhooks.history',
  surface: 'admin',
  method: 'GET',
  path: '/webhooks/deliveries/history',
  summary: 'The last 100 delivery attempts, newest first',
  requires: 'settings:manage',
  input: z.object({ endpointId: z.string().optional() }),
  output: z.object({ data: z.array(AttemptView) }),
  async handler(ctx, { endpointId }) {
    const rows = await latestAttempts(ctx.db, ctx.site._id, HISTORY_SIZE, endpointId);
    return {
      data: rows.map((row) => ({
        id: row._id,
        deliveryId: row.deliveryId,
        endpointId: row.endpointId,
        event: row.event,
        attempt: row.attempt,
        status: row.status,
        responseCode: row.responseCode,
        error: row.error,
        startedAt: row.startedAt?.toISOString() ?? null,
        finishedAt: row.finishedAt?.toISOString() ?? null,
        durationMs: row.durationMs,
      })),
    };
  },
});

/** A new delivery (new id, its own attempts) of the same body to the same endpoint. */
export const redeliverOp = defineOperation({
  id: 'admin.webhooks.redeliver',
  surface: 'admin',
  method: 'POST',
  path: '/webhooks/deliveries/:id/redeliver',
  summary: 'Send a delivery again, as a new delivery',
  requires: 'settings:manage',
  status: 202,
  input: z.object({ id: z.string() }),
  output: z.object({ delivery: z.object({ id: z.string(), redeliveryOf: z.string() }) }),
  async handler(ctx, { id }) {
    const { deliveries, endpoints } = eventCollections(ctx.db);
    const original = await deliveries.findOne({ _id: id, siteId: ctx.site._id });
    if (!original) throw new NotFoundError();
    if (!original.body) throw new BadRequestError('This delivery was never sent: its payload was over the size limit');
    const endpoint = await endpoints.findOne({ _id: original.endpointId, siteId: ctx.site._id }, { projection: { _id: 1 } });
    if (!endpoint) throw new NotFoundError('The endpoint of this delivery was deleted');
    const where = { workspaceId: ctx.workspace._id, dbName: ctx.workspace.dbName, siteId: ctx.site._id };
    const [copy] = await storeDeliveries(ctx.services, where, [endpoint], original.event, original.body, original._id);
    // Stored first: if Temporal is down now, the drain wakes the actor later.
    await wakeActor(ctx.services, where, endpoint._id).catch((error: unknown) => {
      ctx.services.log.warn({ deliveryId: copy._id, err: error instanceof Error ? error.message : String(error) }, 'webhook actor left for the drain');
    });
    return { delivery: { id: copy._id, redeliveryOf: original._id } };
  },
});
