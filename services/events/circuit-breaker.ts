import type { Services } from '../core/context.ts';
import { newId } from '../core/ids.ts';
import type { EndpointRef } from '../../workflows/contracts/endpoint-actor.ts';
import { eventCollections, type EndpointDoc } from './model.ts';
import type { Outcome } from './outcomes.ts';
import { webhookSettings } from './settings.ts';

/**
 * The circuit breaker: any success clears `failingSince`; a batch that failed entirely starts it,
 * or pauses the endpoint once every attempt has failed for `breakerMs`. A pause is written to the
 * history (attempt 0, status `paused`, of the delivery that tripped it), shown by the admin page,
 * and announced with the `webhook.endpointPaused` action for plugins. Returns true when paused.
 */
export async function tripBreaker(services: Services, ref: EndpointRef, endpoint: EndpointDoc, all: Outcome[]): Promise<boolean> {
  const { endpoints, attempts } = eventCollections(services.workspaceDb({ dbName: ref.dbName }));
  // What was withheld says nothing about the receiver.
  const outcomes = all.filter((o) => !o.withheld);
  const key = { _id: ref.endpointId };
  if (outcomes.length === 0) return false;
  if (outcomes.some((o) => o.status === 'succeeded')) {
    if (endpoint.failingSince) await endpoints.updateOne(key, { $set: { failingSince: null } });
    return false;
  }
  const now = services.clock.now();
  if (!endpoint.failingSince) {
    await endpoints.updateOne(key, { $set: { failingSince: outcomes[0].startedAt } });
    return false;
  }
  const { breakerMs } = webhookSettings(services);
  if (now.getTime() - endpoint.failingSince.getTime() < breakerMs) return false;
  const minutes = Math.round(breakerMs / 60_000);
  const reason = `every attempt failed for ${minutes >= 1 ? `${minutes} min` : `${Math.round(breakerMs / 1000)} s`} (last: ${outcomes.at(-1)!.error ?? 'failed'})`;
  const paused = await endpoints.updateOne({ ...key, pausedAt: null }, { $set: { pausedAt: now, pauseReason: reason, busyUntil: null, inflight: [] } });
  const trippedBy = outcomes.at(-1)!.row;
  await attempts.updateOne(
    { siteId: ref.siteId, deliveryId: trippedBy._id, attempt: 0 },
    {
      $set: {
        endpointId: ref.endpointId,
        event: trippedBy.event,
        status: 'paused',
        responseCode: null,
        error: `endpoint paused: ${reason}`,
        startedAt: now,
        finishedAt: now,
        durationMs: 0,
      },
      $setOnInsert: { _id: newId() },
    },
    { upsert: true },
  );
  if (paused.modifiedCount > 0) {
    await services.hooks
      .doAction('webhook.endpointPaused', { siteId: ref.siteId, endpointId: ref.endpointId, name: endpoint.name, pausedAt: now.toISOString(), reason })
      .catch((error: unknown) =>
        services.log.warn({ endpointId: ref.endpointId, err: error instanceof Error ? error.message : String(error) }, 'webhook.endpointPaused action failed'),
      );
  }
  return true;
}
