import type { Services } from '../core/context.ts';
import { platformCollections } from '../tenancy/platform-db.ts';
import type { PurgeStep } from '../../workflows/contracts/workspace.ts';
import { backupCollections } from './backup/model.ts';
import { recordFinalBackup } from './backup/control.ts';
import { purgeDueAt } from './deletion.ts';
import { publishWorkspaceChange } from './lifecycle.ts';

// The purge of a deleted workspace, run by its actor at the end of the grace period (its own
// timer) or at once when an operator confirmed it (`dropDatabase=true`). The row is the truth: each
// step reads it, so a late timer or a purge after an undelete does nothing. docs/lifecycle.md.

/**
 * What the actor does next: wait until the purge is due (the row may say later than its timer
 * thought), nothing (undeleted, purged, held), or purge, after the final backup when one was asked
 * (recorded here once; a failed or cancelled one is replaced by a new one).
 */
export async function prepareWorkspacePurge(services: Services, workspaceId: string): Promise<PurgeStep> {
  const { workspaces } = platformCollections(services);
  const row = await workspaces.findOne({ _id: workspaceId });
  const due = purgeDueAt(row);
  if (!row?.deletion || due === null) return { kind: 'none' };
  if (due > services.clock.now().getTime()) return { kind: 'wait', purgeAt: due };
  if (!row.deletion.finalBackup) return { kind: 'purge', finalBackupId: null };
  const last = row.deletion.finalBackupId ? await backupCollections(services).backups.findOne({ _id: row.deletion.finalBackupId }) : null;
  if (last?.state === 'succeeded') return { kind: 'purge', finalBackupId: null };
  if (last?.state === 'running') return { kind: 'purge', finalBackupId: last._id };
  const backup = await recordFinalBackup(services, workspaceId);
  await workspaces.updateOne({ _id: workspaceId, status: 'deleted' }, { $set: { 'deletion.finalBackupId': backup._id } });
  return { kind: 'purge', finalBackupId: backup._id };
}

/**
 * Drops the workspace's database (every collection, every media file) and keeps the row as a record
 * with `purgedAt`. A final backup that was asked and did not succeed holds the purge instead
 * (`deletion.purgeHeld`, shown in the tenant): the data is not dropped without it.
 */
export async function purgeWorkspace(services: Services, workspaceId: string): Promise<void> {
  const { workspaces } = platformCollections(services);
  const row = await workspaces.findOne({ _id: workspaceId });
  const due = purgeDueAt(row);
  const now = services.clock.now();
  if (!row?.deletion || due === null || due > now.getTime()) return;
  if (row.deletion.finalBackup) {
    const backup = row.deletion.finalBackupId ? await backupCollections(services).backups.findOne({ _id: row.deletion.finalBackupId }) : null;
    if (backup?.state !== 'succeeded') {
      const reason = `Final backup ${backup?.state ?? 'missing'}${backup?.error ? `: ${backup.error}` : ''}`;
      await workspaces.updateOne(
        { _id: workspaceId, status: 'deleted' },
        { $set: { 'deletion.purgeHeld': reason, updatedAt: now }, $unset: { 'deletion.purgeAt': '' } },
      );
      return;
    }
  }
  await services.workspaceDb(row).dropDatabase();
  // `deletion.purgeAt` goes: it marks a pending purge (the reconciler's index, lifecycle-reconciler.ts).
  await workspaces.updateOne(
    { _id: workspaceId, status: 'deleted' },
    { $set: { purgedAt: now, databaseDropped: true, updatedAt: now }, $unset: { 'deletion.purgeAt': '' } },
  );
  await publishWorkspaceChange(services, workspaceId);
}
