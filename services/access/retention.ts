import { startPeriodicPass, type PeriodicPass } from '../core/periodic-pass.ts';
import type { Services } from '../core/context.ts';
import { platformCollections } from '../tenancy/platform-db.ts';
import { purgeExpiredFailures } from './audit.ts';
import { purgeOldWindows } from './rate-limit.ts';

/**
 * Drops, for every site, the failure audit rows and rate counters past their `expiresAt`: MongoDB's
 * TTL indexes do it by themselves, the local engine has none, and a site that only ever receives
 * refused requests never runs the gate's own once-a-minute counter purge. Returns the rows dropped.
 */
export async function purgeExpiredAccessRows(services: Services): Promise<number> {
  const { workspaces, sites } = platformCollections(services);
  const now = services.clock.now();
  let dropped = 0;
  for await (const workspace of workspaces.find({ status: { $in: ['active', 'suspended'] } })) {
    const db = services.workspaceDb(workspace);
    for await (const site of sites.find({ workspaceId: workspace._id }, { projection: { _id: 1 } })) {
      dropped += (await purgeExpiredFailures(db, site._id, now)) + (await purgeOldWindows(db, site._id, now));
    }
  }
  return dropped;
}

/** Runs the purge in the worker: at boot, then every `intervalMs`. Stops with the MongoDB client. */
export function startAccessRetention(services: Services, intervalMs = 5 * 60_000): PeriodicPass {
  const pass = startPeriodicPass('access retention', intervalMs, services.log, () => purgeExpiredAccessRows(services));
  services.mongo.once('topologyClosed', () => void pass.stop());
  return pass;
}
