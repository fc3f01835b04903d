import type { Services } from '../core/context.ts';
import { newId } from '../core/ids.ts';
import {
  endpointActorId,
  endpointActorWorkflowName,
  wakeSignal,
  type EndpointActorInput,
  type EndpointActorWorkflow,
} from '../../workflows/contracts/endpoint-actor.ts';
import { eventCollections, type DeliveryDoc, type EndpointDoc } from './model.ts';

/** The contract's payload ceiling (6.2.2, 8). */
export const MAX_BODY_BYTES = 256 * 1024;

// The run id of the retired per-delivery design (legacy-deliveries.ts), for the workspace deletion.
export { deliveryWorkflowId } from './legacy-deliveries.ts';

export interface DeliveryTarget {
  workspaceId: string;
  dbName: string;
  siteId: string;
}

/** The actor's input: where the endpoint lives, and the workflow-side knobs of this process. */
export function actorInput(services: Services, where: DeliveryTarget, endpointId: string): EndpointActorInput {
  const settings = services.webhooks;
  return {
    workspaceId: where.workspaceId,
    dbName: where.dbName,
    siteId: where.siteId,
    endpointId,
    passBudgetMs: settings.passBudgetMs,
    attemptTimeoutMs: settings.attemptTimeoutMs,
    heartbeatTimeoutMs: settings.heartbeatTimeoutMs,
    idleMs: settings.idleMs,
    passesPerRun: settings.passesPerRun,
  };
}

/**
 * Wakes (or starts) one endpoint's actor with signal-with-start: one workflow per endpoint, so
 * a second call finds it running and only signals it. Calls for the same endpoint coalesce in
 * this process: while one is in flight, any number of further calls send exactly one more.
 */
export async function wakeActor(services: Services, where: DeliveryTarget, endpointId: string): Promise<void> {
  const { wakes } = services.webhooks;
  const workflowId = endpointActorId(where.workspaceId, endpointId);
  const inFlight = wakes.get(workflowId);
  if (inFlight) {
    inFlight.again = true;
    return;
  }
  const state = { again: true };
  wakes.set(workflowId, state);
  try {
    while (state.again) {
      state.again = false;
      await services.temporal.client.workflow.signalWithStart<EndpointActorWorkflow, []>(endpointActorWorkflowName, {
        taskQueue: services.temporal.taskQueue,
        workflowId,
        args: [actorInput(services, where, endpointId)],
        signal: wakeSignal,
        signalArgs: [],
      });
    }
  } finally {
    wakes.delete(workflowId);
  }
}

/**
 * After new rows are stored: an actor in a pass gets the new ids on its endpoint's inbox (one
 * conditional push per endpoint, all in one statement), so it needs no scan to find them; the
 * others are woken (not the paused ones: they wait for a resume). The push only lands while the
 * actor is busy, and the actor clears the flag and takes the inbox in one statement, so no row
 * goes unseen. When some push did not land the statement does not say which, so every endpoint
 * pushed to is woken (a wake of a busy actor costs one more pass). A failure is logged; the drain
 * starts what was missed. `known` are the endpoints' states if the caller has read them: they only
 * choose between a push and a wake, which are both safe whenever the state was read.
 */
export async function wakeActorsFor(
  services: Services,
  where: DeliveryTarget,
  docs: readonly Pick<DeliveryDoc, '_id' | 'endpointId' | 'status'>[],
  known?: readonly Pick<EndpointDoc, '_id' | 'siteId' | 'busyUntil' | 'pausedAt' | 'heldUntil'>[],
): Promise<void> {
  const pending = docs.filter((doc) => doc.status === 'pending');
  if (pending.length === 0) return;
  const byEndpoint = new Map<string, string[]>();
  for (const doc of pending) byEndpoint.set(doc.endpointId, [...(byEndpoint.get(doc.endpointId) ?? []), doc._id]);
  const { endpoints } = eventCollections(services.workspaceDb({ dbName: where.dbName }));
  const now = services.clock.now();
  // A hint saying paused or held is read again: a resume or a probe in between must not leave a row unseen.
  const fresh =
    known?.every((state) => !state.pausedAt && !(state.heldUntil && state.heldUntil > now) && byEndpoint.has(state._id)) && known.length === byEndpoint.size;
  // By _id only (the local engine's only index), the site checked here.
  const read = (ids: string[]) => endpoints.find({ _id: { $in: ids } }, { projection: { siteId: 1, busyUntil: 1, pausedAt: 1, heldUntil: 1 } }).toArray();
  // Paused: waits for a resume. Held: its actor's timer runs a pass (and a scan) at that time.
  const waiting = (state: Pick<EndpointDoc, 'siteId' | 'pausedAt' | 'heldUntil'>) =>
    state.siteId !== where.siteId || Boolean(state.pausedAt) || Boolean(state.heldUntil && state.heldUntil > now);
  const isBusy = (state: Pick<EndpointDoc, 'busyUntil'>) => Boolean(state.busyUntil && state.busyUntil > now);
  const states = (fresh ? known! : await read([...byEndpoint.keys()])).filter((state) => !waiting(state));
  const busy = states.filter(isBusy).map((state) => state._id);
  const toWake = states.filter((state) => !isBusy(state)).map((state) => state._id);
  if (busy.length) {
    const pushed = await endpoints.bulkWrite(
      busy.map((id) => ({ updateOne: { filter: { _id: id, busyUntil: { $gt: now } }, update: { $push: { inbox: { $each: byEndpoint.get(id)! } } } } })),
      { ordered: false },
    );
    // Some pass ended meanwhile (the statement does not say which): read them again. One busy
    // again, or held, started after our rows were stored, so its scan finds them.
    if (pushed.matchedCount < busy.length) toWake.push(...(await read(busy)).filter((state) => !waiting(state) && !isBusy(state)).map((state) => state._id));
  }
  await Promise.all(
    toWake.map((id) =>
      wakeActor(services, where, id).catch((error: unknown) => {
        services.log.warn({ endpointId: id, err: error instanceof Error ? error.message : String(error) }, 'webhook actor left for the drain');
      }),
    ),
  );
}

/**
 * The outbox rows of one event: one delivery per endpoint, `pending` and due at once. A body over
 * the limit is recorded as failed without being sent.
 */
export function buildDeliveries(
  services: Services,
  where: DeliveryTarget,
  endpoints: readonly Pick<EndpointDoc, '_id'>[],
  event: string,
  body: string,
  redeliveryOf: string | null = null,
): DeliveryDoc[] {
  const now = services.clock.now();
  const tooLarge = Buffer.byteLength(body) > MAX_BODY_BYTES;
  return endpoints.map((endpoint) => ({
    _id: newId(),
    siteId: where.siteId,
    endpointId: endpoint._id,
    event,
    body: tooLarge ? '' : body,
    status: tooLarge ? 'failed' : 'pending',
    attempts: 0,
    responseCode: null,
    error: tooLarge ? `payload exceeds ${MAX_BODY_BYTES} bytes` : null,
    redeliveryOf,
    createdAt: now,
    updatedAt: now,
    finishedAt: tooLarge ? now : null,
    via: 'endpoint',
    nextAttemptAt: now,
    claimed: false,
  }));
}

/**
 * Stores one delivery per endpoint before anything is sent, so an event survives a crash or a
 * Temporal outage between here and the wake: the drain finds the row `pending` and wakes its actor.
 */
export async function storeDeliveries(
  services: Services,
  where: DeliveryTarget,
  endpoints: readonly Pick<EndpointDoc, '_id'>[],
  event: string,
  body: string,
  redeliveryOf: string | null = null,
): Promise<DeliveryDoc[]> {
  const docs = buildDeliveries(services, where, endpoints, event, body, redeliveryOf);
  if (docs.length) await eventCollections(services.workspaceDb({ dbName: where.dbName })).deliveries.insertMany(docs);
  return docs;
}
