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

// The per-delivery workflow of the design before the endpoint actors (kept for the migration).
export { deliveryWorkflowId } from '../../workflows/contracts/delivery.ts';

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
 * After new rows are stored: wakes the actors that are not in a pass (a pass picks new rows up by
 * itself) and not paused (they wait for a resume). The busy flag is read after the rows were
 * written, which with the pass's own final check leaves no row unseen. A failure is logged; the
 * drain starts what was missed.
 */
export async function wakeActorsFor(services: Services, where: DeliveryTarget, docs: readonly DeliveryDoc[]): Promise<void> {
  const ids = [...new Set(docs.filter((doc) => doc.status === 'pending').map((doc) => doc.endpointId))];
  if (ids.length === 0) return;
  const now = services.clock.now();
  const states = await eventCollections(services.workspaceDb({ dbName: where.dbName }))
    .endpoints.find({ _id: { $in: ids }, siteId: where.siteId }, { projection: { busyUntil: 1, pausedAt: 1 } })
    .toArray();
  const idle = states.filter((state) => !state.pausedAt && !(state.busyUntil && state.busyUntil > now));
  await Promise.all(
    idle.map((state) =>
      wakeActor(services, where, state._id).catch((error: unknown) => {
        services.log.warn({ endpointId: state._id, err: error instanceof Error ? error.message : String(error) }, 'webhook actor left for the drain');
      }),
    ),
  );
}

/**
 * Stores one delivery per endpoint before anything is sent, so an event survives a crash or a
 * Temporal outage between here and the wake: the drain finds the row `pending` and wakes its actor.
 * A body over the limit is recorded as failed without being sent.
 */
export async function storeDeliveries(
  services: Services,
  where: DeliveryTarget,
  endpoints: readonly Pick<EndpointDoc, '_id'>[],
  event: string,
  body: string,
  redeliveryOf: string | null = null,
): Promise<DeliveryDoc[]> {
  const now = services.clock.now();
  const tooLarge = Buffer.byteLength(body) > MAX_BODY_BYTES;
  const docs: DeliveryDoc[] = endpoints.map((endpoint) => ({
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
  if (docs.length) await eventCollections(services.workspaceDb({ dbName: where.dbName })).deliveries.insertMany(docs);
  return docs;
}

