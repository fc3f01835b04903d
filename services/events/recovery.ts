import type { Services } from '../core/context.ts';
import { platformCollections } from '../platform/workspaces.ts';
import { eventCollections } from './model.ts';
import { startDeliveryWorkflow } from './deliveries.ts';
import { webhookSettings } from './settings.ts';

/** Per site and pass: enough to catch up after an outage without one pass running for ages. */
const BATCH = 500;

/**
 * Re-starts every delivery that is not final and has not moved for `drainGraceMs`: rows whose start
 * failed (Temporal down), whose process died between the insert and the start, or whose run was
 * terminated. Starting is idempotent (workflow id = delivery id): a running delivery is left alone.
 * Returns how many rows it looked at.
 */
export async function drainDeliveries(services: Services): Promise<number> {
  const { graceMs, now } = { graceMs: webhookSettings(services).drainGraceMs, now: services.clock.now().getTime() };
  const { workspaces, sites } = platformCollections(services);
  let seen = 0;
  for (const workspace of await workspaces.find({ status: 'active' }).toArray()) {
    const db = services.workspaceDb(workspace);
    for (const site of await sites.find({ workspaceId: workspace._id }).toArray()) {
      const stale = await eventCollections(db)
        .deliveries.find(
          { siteId: site._id, status: 'pending', updatedAt: { $lt: new Date(now - graceMs) } },
          { projection: { _id: 1 } },
        )
        .limit(BATCH)
        .toArray();
      for (const row of stale) {
        seen++;
        await startDeliveryWorkflow(services, { dbName: workspace.dbName, siteId: site._id }, row._id);
      }
    }
  }
  return seen;
}

/**
 * The worker's delivery queue drain (contract 6.2.5): once at boot (re-queue what a deploy or
 * crash interrupted) and then every `drainIntervalMs`. It stops when the process's MongoDB client
 * closes, and never keeps the process alive on its own.
 */
export function startDeliveryRecovery(services: Services): { stop(): void; drainNow(): Promise<number> } {
  const { drainIntervalMs } = webhookSettings(services);
  let busy = false;
  let stopped = false;
  const tick = () => {
    if (busy || stopped) return;
    busy = true;
    drainDeliveries(services)
      .catch((error: unknown) => {
        if (!stopped) services.log.warn({ err: error instanceof Error ? error.message : String(error) }, 'webhook drain failed');
      })
      .finally(() => (busy = false));
  };
  const timer = setInterval(tick, drainIntervalMs);
  timer.unref();
  const boot = setTimeout(tick, 0);
  boot.unref();
  const stop = () => {
    stopped = true;
    clearInterval(timer);
    clearTimeout(boot);
  };
  services.mongo.once('topologyClosed', stop);
  return { stop, drainNow: () => drainDeliveries(services) };
}
