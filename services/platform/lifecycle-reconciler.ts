import { startPeriodicPass } from '../core/periodic-pass.ts';
import type { Services } from '../core/context.ts';
import { workspaceIndexVersion } from '../tenancy/index-version.ts';
import { sendWorkspaceCommand } from './workspace-actor.ts';
import { platformCollections } from '../tenancy/platform-db.ts';

export interface ReconcileOptions {
  /** Steps younger than this are most likely being worked on; re-sending them is harmless but noisy. */
  graceMs?: number;
  /** Index upgrades handed out per pass, so a release with a new index rolls through gradually. */
  indexBatch?: number;
}

/**
 * Re-sends to each workspace actor what its row says is unfinished: a gateway killed between
 * writing `provisioning` / `deleting` and signalling the actor (or Temporal away at that moment)
 * leaves the intent in the row, and this finishes it; so with a purge overdue. Also hands out index upgrades after a release
 * changed the index specs: gateways never walk the workspaces at start.
 */
export async function reconcileWorkspaces(services: Services, options: ReconcileOptions = {}): Promise<{ resumed: number; indexes: number }> {
  const { workspaces } = platformCollections(services);
  const before = new Date(services.clock.now().getTime() - (options.graceMs ?? 30_000));
  let resumed = 0;
  for await (const row of workspaces.find({ status: { $in: ['provisioning', 'deleting'] }, updatedAt: { $lt: before } })) {
    const command =
      row.status === 'provisioning' ? { kind: 'provision' as const } : { kind: 'delete' as const, dropDatabase: row.deletion?.dropDatabase === true };
    if (await sendWorkspaceCommand(services, row._id, command)) resumed += 1;
  }
  // A purge whose date passed without it (the actor's run that held its timer was terminated):
  // the command is harmless if it did run meanwhile (the purge step reads the row).
  const overdue = workspaces.find({ status: 'deleted', 'deletion.purgeAt': { $lt: before } }, { projection: { _id: 1 } }).limit(options.indexBatch ?? 100);
  for await (const row of overdue) {
    if (await sendWorkspaceCommand(services, row._id, { kind: 'purge' })) resumed += 1;
  }
  let indexes = 0;
  const version = workspaceIndexVersion(services.features);
  const stale = workspaces
    .find({ status: { $in: ['active', 'suspended'] }, indexVersion: { $ne: version } }, { projection: { _id: 1 } })
    .limit(options.indexBatch ?? 100);
  for await (const row of stale) {
    if (await sendWorkspaceCommand(services, row._id, { kind: 'indexes' })) indexes += 1;
  }
  return { resumed, indexes };
}

/** Runs the reconciler in the worker: at boot, then every `intervalMs`. Stops with the MongoDB client. */
export function startWorkspaceReconciler(services: Services, intervalMs = 60_000): { stop(): Promise<void> } {
  const reconciler = startPeriodicPass('workspace reconciler', intervalMs, services.log, () => reconcileWorkspaces(services));
  services.mongo.once('topologyClosed', () => void reconciler.stop());
  return reconciler;
}
