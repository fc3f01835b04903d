import type { Services } from '../core/context.ts';
import type { Figures } from '../core/feature.ts';
import type { Workspace } from '../core/tenants.ts';
import { ConflictError } from '../core/errors.ts';
import { platformCollections } from '../tenancy/platform-db.ts';
import { publishWorkspaceChange } from './lifecycle.ts';

/** What a deletion request may say besides `dropDatabase` (the route's `grace` and `finalBackup`); unset: what the row says, else the defaults. */
export interface DeletionRequest {
  graceMs?: number;
  finalBackup?: boolean;
}

/**
 * When the workspace's purge is due (ms since the epoch; 0: at once, an operator confirmed it), or
 * null when there is nothing to purge: not deleted, purged already, deleted before grace periods
 * existed (kept until purged explicitly), or its purge held (the final backup failed).
 */
export function purgeDueAt(row: Workspace | null): number | null {
  if (!row || row.status !== 'deleted' || row.purgedAt || row.databaseDropped || !row.deletion || row.deletion.purgeHeld) return null;
  if (row.deletion.dropDatabase) return 0;
  return row.deletion.purgeAt?.getTime() ?? null;
}

/**
 * Step 1: the workspace stops answering (`deleting` does not resolve) and the request is recorded:
 * the purge's date (now + the grace period), what an undelete brings back, whether a final backup
 * is taken. Asking again is harmless (a new `grace` or `finalBackup` replaces the recorded one);
 * asking to drop the database after a deletion that kept it runs the steps again, purging at the end.
 * Refused (409) while a move switches the workspace's cluster (writes refused, a few seconds): the
 * switch would finish on a deleted workspace. Before the switch the move stops by itself (it moves
 * only an active or suspended workspace); after it, it only drops the source (docs/placement.md).
 */
export async function beginWorkspaceDeletion(services: Services, workspaceId: string, dropDatabase: boolean, request: DeletionRequest = {}): Promise<boolean> {
  const { workspaces } = platformCollections(services);
  const row = await workspaces.findOne({ _id: workspaceId });
  if (!row || row.purgedAt || row.databaseDropped) return false;
  const now = services.clock.now();
  const before = row.deletion;
  const previousStatus = before?.previousStatus ?? (row.status === 'active' || row.status === 'suspended' ? row.status : undefined);
  const finalBackupId = before?.finalBackupId;
  const deletion: NonNullable<Workspace['deletion']> = {
    dropDatabase: dropDatabase || before?.dropDatabase === true,
    requestedAt: before?.requestedAt ?? now,
    purgeAt:
      request.graceMs !== undefined
        ? new Date(now.getTime() + request.graceMs)
        : (before?.purgeAt ?? new Date(now.getTime() + services.config.WORKSPACE_DELETE_GRACE)),
    finalBackup: request.finalBackup ?? before?.finalBackup ?? false,
    ...(previousStatus ? { previousStatus } : {}),
    ...(finalBackupId ? { finalBackupId } : {}),
  };
  if (row.status === 'deleted' && !deletion.dropDatabase) {
    // Already deleted and kept: only the purge's date or the final backup change (the actor's timer follows).
    await workspaces.updateOne({ _id: workspaceId, status: 'deleted' }, { $set: { deletion, updatedAt: now } });
    return false;
  }
  // Conditional on the same row the switch's start is (placement/move.ts `freezeWrites`): one of the two wins.
  const begun = await workspaces.updateOne(
    { _id: workspaceId, 'move.state': { $ne: 'switching' } },
    { $set: { status: 'deleting', deletion, updatedAt: now }, $unset: { provisioning: '' } },
  );
  if (begun.matchedCount === 0) throw new ConflictError('A move of this workspace is switching clusters: delete it once the move has ended');
  await publishWorkspaceChange(services, workspaceId);
  return true;
}

/**
 * Step 2: nothing of the workspace keeps running: each feature stops its own work
 * (`Feature.stopWork`: each site's export actor, every entry schedule, each webhook endpoint's actor
 * and every pending delivery, marked failed so no drain restarts it, the backup schedule, a running
 * backup or restore).
 */
export async function cancelWorkspaceWork(services: Services, workspaceId: string): Promise<Figures> {
  const row = await platformCollections(services).workspaces.findOne({ _id: workspaceId });
  if (!row || row.status !== 'deleting') return {};
  const stopped: Record<string, number> = {};
  for (const feature of services.features) Object.assign(stopped, await feature.stopWork?.(services, row));
  return stopped;
}

// Step 3 frees the domains: `releaseWorkspaceDomains` (domains.ts), the one releaser.

/**
 * Step 4: the workspace is `deleted` (its row stays, as a record; its database is kept until the
 * purge, purge.ts). Answers when the purge is due (`purgeDueAt`), for the actor's timer.
 */
export async function finishWorkspaceDeletion(services: Services, workspaceId: string): Promise<number | null> {
  const { workspaces } = platformCollections(services);
  const row = await workspaces.findOne({ _id: workspaceId });
  if (row?.status === 'deleting') {
    await workspaces.updateOne({ _id: workspaceId, status: 'deleting' }, { $set: { status: 'deleted', updatedAt: services.clock.now() } });
    await publishWorkspaceChange(services, workspaceId);
  }
  return purgeDueAt(await workspaces.findOne({ _id: workspaceId }));
}
