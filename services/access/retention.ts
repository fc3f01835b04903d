import { startPeriodicPass, type PeriodicPass } from '../core/periodic-pass.ts';
import type { Services } from '../core/context.ts';
import { platformCollections } from '../tenancy/platform-db.ts';
import { purgeLapsedAuditRows, purgeLapsedPlatformRows } from '../audit/retention.ts';
import { purgeOldWindows } from './rate-limit.ts';

/**
 * Drops, for every site, the audit rows that are due (failure rows past their `expiresAt`, change
 * rows past the workspace's retention: services/audit/retention.ts) and rate counters past their
 * `expiresAt`, then the platform's own due audit rows: MongoDB's TTL indexes drop the expired ones
 * by themselves, the local engine has none, a shortened retention reaches older rows only here, and
 * a site that only ever receives refused requests never runs the gate's own once-a-minute counter
 * purge. Bounded per site and pass. Returns the rows dropped.
 */
export async function purgeExpiredAccessRows(services: Services): Promise<number> {
  const { workspaces, sites } = platformCollections(services);
  const now = services.clock.now();
  let dropped = 0;
  for await (const workspace of workspaces.find({ status: { $in: ['active', 'suspended'] } })) {
    const db = services.workspaceDb(workspace);
    for await (const site of sites.find({ workspaceId: workspace._id }, { projection: { _id: 1 } })) {
      dropped += (await purgeLapsedAuditRows(db, site._id, workspace.auditRetentionDays, now)) + (await purgeOldWindows(db, site._id, now));
    }
  }
  return dropped + (await purgeLapsedPlatformRows(services.platformDb, now));
}

/** Runs the purge in the worker: at boot, then every `intervalMs`. Stops with the MongoDB client. */
export function startAccessRetention(services: Services, intervalMs = 5 * 60_000): PeriodicPass {
  const pass = startPeriodicPass('access retention', intervalMs, services.log, () => purgeExpiredAccessRows(services));
  services.mongo.once('topologyClosed', () => void pass.stop());
  return pass;
}
