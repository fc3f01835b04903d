import { WorkflowNotFoundError } from '@temporalio/client';
import { startPeriodicPass } from '../core/periodic-pass.ts';
import type { Services } from '../core/context.ts';
import { platformCollections } from '../tenancy/platform-db.ts';
import { endpointActorId } from '../../workflows/contracts/endpoint-actor.ts';
import { eventCollections } from './model.ts';
import { wakeActor, wakeActorsFor } from './deliveries.ts';
import { deliveryWorkflowId } from './legacy-deliveries.ts';

/** Per site and pass: enough to catch up after an outage without one pass running for ages. */
const BATCH = 500;

/** Whether Temporal has a running execution with this id (a read: no commit on the server). */
async function isRunning(services: Services, workflowId: string): Promise<boolean> {
  try {
    const description = await services.temporal.client.workflow.getHandle(workflowId).describe();
    return description.status.name === 'RUNNING';
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

/**
 * The queue drain (contract 6.2.5). For every site:
 * 1. rows stored by the retired per-delivery design (no `via`) whose old run is not open are
 *    handed to their endpoint's actor, woken as for a stored row (an open one is left alone: no
 *    double send if an older worker still runs it; legacy-deliveries.ts);
 * 2. every endpoint that owes deliveries and is not paused gets its actor started when none is
 *    running (signal-with-start); a running actor is not touched, so nothing is sent twice by
 *    the drain. This covers rows whose wake failed (Temporal down), whose process died between
 *    the insert and the wake, and actors that were terminated.
 * Returns how many actors it started.
 */
export async function drainDeliveries(services: Services): Promise<number> {
  const { workspaces, sites } = platformCollections(services);
  let started = 0;
  // The queue's depth and oldest pending row across every site, for the metrics (docs/observability.md).
  let depth = 0;
  let oldest: number | null = null;
  for (const workspace of await workspaces.find({ status: 'active' }).toArray()) {
    const { deliveries, endpoints } = eventCollections(services.workspaceDb(workspace));
    for (const site of await sites.find({ workspaceId: workspace._id }).toArray()) {
      const where = { workspaceId: workspace._id, dbName: workspace.dbName, siteId: site._id };
      const legacy = await deliveries
        .find({ siteId: site._id, status: 'pending', via: { $exists: false } }, { projection: { _id: 1, endpointId: 1, status: 1 } })
        .limit(BATCH)
        .toArray();
      const adopted: typeof legacy = [];
      for (const row of legacy) {
        if (await isRunning(services, deliveryWorkflowId(row._id))) continue;
        const taken = await deliveries.updateOne(
          { _id: row._id, siteId: site._id, status: 'pending', via: { $exists: false } },
          { $set: { via: 'endpoint', nextAttemptAt: services.clock.now(), claimed: false } },
        );
        if (taken.modifiedCount > 0) adopted.push(row);
      }
      // An actor already running (idle, or in a pass) would not find them before its next wake.
      await wakeActorsFor(services, where, adopted);
      depth += await deliveries.countDocuments({ siteId: site._id, status: 'pending' });
      const [first] = await deliveries
        .find({ siteId: site._id, status: 'pending' }, { projection: { createdAt: 1 } })
        .sort({ createdAt: 1 })
        .limit(1)
        .toArray();
      if (first && (oldest === null || first.createdAt.getTime() < oldest)) oldest = first.createdAt.getTime();
      const owing = await deliveries.distinct('endpointId', { siteId: site._id, status: 'pending', via: 'endpoint' });
      if (owing.length === 0) continue;
      const paused = new Set(
        (await endpoints.find({ siteId: site._id, _id: { $in: owing }, pausedAt: { $ne: null } }, { projection: { _id: 1 } }).toArray()).map((e) => e._id),
      );
      for (const endpointId of owing) {
        if (paused.has(endpointId) || (await isRunning(services, endpointActorId(workspace._id, endpointId)))) continue;
        await wakeActor(services, where, endpointId);
        started++;
      }
    }
  }
  services.metrics.webhookQueueDepth.set(depth);
  services.metrics.webhookOldestPendingAge.set(oldest === null ? 0 : Math.max(0, services.clock.now().getTime() - oldest) / 1000);
  return started;
}

/**
 * The worker's delivery queue drain: at once at boot (re-queue what a deploy or crash interrupted,
 * no grace period) and then every `drainIntervalMs`. It stops when the process's MongoDB client
 * closes, and never keeps the process alive on its own.
 */
export function startDeliveryRecovery(services: Services): { stop(): Promise<void>; drainNow(): Promise<number> } {
  const { drainIntervalMs } = services.webhooks;
  const drain = startPeriodicPass('webhook drain', drainIntervalMs, services.log, () => drainDeliveries(services));
  services.mongo.once('topologyClosed', () => void drain.stop());
  return {
    async stop() {
      await drain.stop();
    },
    drainNow: () => drainDeliveries(services),
  };
}
