import type { Services } from '../core/context.ts';
import type { Figures } from '../core/feature.ts';
import { platformCollections } from '../tenancy/platform-db.ts';
import { publishWorkspaceChange } from './lifecycle.ts';

/**
 * Step 1: the workspace stops answering (`deleting` does not resolve) and the request is recorded.
 * Asking again is harmless; asking to drop the database after a deletion that kept it drops it.
 */
export async function beginWorkspaceDeletion(services: Services, workspaceId: string, dropDatabase: boolean): Promise<boolean> {
  const { workspaces } = platformCollections(services);
  const row = await workspaces.findOne({ _id: workspaceId });
  if (!row) return false;
  const drop = dropDatabase || row.deletion?.dropDatabase === true;
  if (row.status === 'deleted' && (!drop || row.databaseDropped)) return false;
  await workspaces.updateOne(
    { _id: workspaceId },
    {
      $set: {
        status: 'deleting',
        deletion: { dropDatabase: drop, requestedAt: row.deletion?.requestedAt ?? services.clock.now() },
        updatedAt: services.clock.now(),
      },
      $unset: { provisioning: '' },
    },
  );
  await publishWorkspaceChange(services, workspaceId);
  return true;
}

/**
 * Step 2: nothing of the workspace keeps running: each feature stops its own work
 * (`Feature.stopWork`: each site's export actor, every entry schedule, each webhook endpoint's actor
 * and every pending delivery, marked failed so no drain restarts it).
 */
export async function cancelWorkspaceWork(services: Services, workspaceId: string): Promise<Figures> {
  const row = await platformCollections(services).workspaces.findOne({ _id: workspaceId });
  if (!row || row.status !== 'deleting') return {};
  const stopped: Record<string, number> = {};
  for (const feature of services.features) Object.assign(stopped, await feature.stopWork?.(services, row));
  return stopped;
}

// Step 3 frees the domains: `releaseWorkspaceDomains` (domains.ts), the one releaser.

/** Step 4: the database goes when asked, then the workspace is `deleted` (its row stays, as a record). */
export async function finishWorkspaceDeletion(services: Services, workspaceId: string): Promise<void> {
  const { workspaces } = platformCollections(services);
  const row = await workspaces.findOne({ _id: workspaceId });
  if (!row || row.status !== 'deleting') return;
  const drop = row.deletion?.dropDatabase === true;
  if (drop) await services.workspaceDb(row).dropDatabase();
  await workspaces.updateOne(
    { _id: workspaceId, status: 'deleting' },
    { $set: { status: 'deleted', updatedAt: services.clock.now(), ...(drop ? { databaseDropped: true } : {}) } },
  );
  await publishWorkspaceChange(services, workspaceId);
}
