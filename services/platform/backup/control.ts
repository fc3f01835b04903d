import { WorkflowNotFoundError } from '@temporalio/client';
import { stopWorkspaceWorkflow } from '../../core/workflow-stop.ts';
import type { Services } from '../../core/context.ts';
import { ConflictError, NotFoundError, ServiceUnavailableError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import type { Workspace } from '../../core/tenants.ts';
import {
  backupWorkflowId,
  backupWorkflowType,
  cancelBackupSignal,
  restoreWorkflowId,
  restoreWorkflowType,
  type BackupRef,
  type RestoreRef,
} from '../../../workflows/contracts/backup.ts';
import { getWorkspace } from '../lifecycle.ts';
import { backupCollections, emptyProgress, type BackupRow, type RestoreRow } from './model.ts';
import { backupPrefix } from './archive.ts';
import { endBackup } from './snapshot.ts';
import { failRestore } from './restore.ts';
import { backupStore } from './store.ts';
import { BackupVerificationError, checkArchive } from './verify.ts';

/** A workspace a backup or a restore may start on: active or suspended, with neither running. */
export async function idleWorkspace(services: Services, workspaceId: string): Promise<Workspace> {
  const workspace = await getWorkspace(services, workspaceId);
  if (workspace.status !== 'active' && workspace.status !== 'suspended') throw new ConflictError(`Workspace is ${workspace.status}`);
  // A move copies the database elsewhere meanwhile (docs/placement.md).
  if (workspace.move) throw new ConflictError('A move of this workspace is running');
  const { backups, restores } = backupCollections(services);
  if (await backups.findOne({ workspaceId, state: 'running' }, { projection: { _id: 1 } })) throw new ConflictError('A backup of this workspace is running');
  if (await restores.findOne({ workspaceId, state: 'running' }, { projection: { _id: 1 } })) throw new ConflictError('A restore of this workspace is running');
  return workspace;
}

/** A backup recorded as `running` (its workflow not started yet); 404/409 when the workspace cannot be backed up now. */
export async function recordBackup(services: Services, workspaceId: string, trigger: BackupRow['trigger']): Promise<BackupRow> {
  await idleWorkspace(services, workspaceId);
  return insertBackupRow(services, workspaceId, trigger);
}

/**
 * The final backup of a deleted workspace, before its purge (the workspace actor runs it as a child):
 * nothing else runs on a deleted workspace, so no idle check.
 */
export async function recordFinalBackup(services: Services, workspaceId: string): Promise<BackupRow> {
  return insertBackupRow(services, workspaceId, 'final');
}

async function insertBackupRow(services: Services, workspaceId: string, trigger: BackupRow['trigger']): Promise<BackupRow> {
  const now = services.clock.now();
  const row: BackupRow = {
    _id: newId(),
    workspaceId,
    state: 'running',
    trigger,
    progress: emptyProgress(),
    manifestSha256: null,
    error: null,
    createdAt: now,
    finishedAt: null,
    updatedAt: now,
  };
  await backupCollections(services).backups.insertOne(row);
  return row;
}

/** Records a backup as `running` and starts its workflow (`backup:<workspaceId>:<backupId>`). */
export async function startBackup(services: Services, workspaceId: string): Promise<BackupRow> {
  const row = await recordBackup(services, workspaceId, 'manual');
  const { backups } = backupCollections(services);
  const now = row.createdAt;
  const ref: BackupRef = { workspaceId, backupId: row._id };
  try {
    await services.temporal.client.workflow.start(backupWorkflowType, {
      taskQueue: services.temporal.taskQueue,
      workflowId: backupWorkflowId(workspaceId, row._id),
      args: [ref],
    });
  } catch (error) {
    services.log.error({ err: error, workspaceId }, 'backup workflow not started');
    await backups.updateOne({ _id: row._id }, { $set: { state: 'failed', error: 'The workflow engine is unavailable', finishedAt: now } });
    throw new ServiceUnavailableError('The workflow engine is unavailable');
  }
  return row;
}

export async function findBackup(services: Services, workspaceId: string, backupId: string): Promise<BackupRow> {
  const row = await backupCollections(services).backups.findOne({ _id: backupId, workspaceId });
  if (!row) throw new NotFoundError('Backup not found');
  return row;
}

/** Asks a running backup to stop between two steps; its workflow then removes what it wrote and says `cancelled`. */
export async function cancelBackup(services: Services, row: BackupRow): Promise<void> {
  if (row.state !== 'running') throw new ConflictError(`Backup is ${row.state}`);
  const ref: BackupRef = { workspaceId: row.workspaceId, backupId: row._id };
  await backupCollections(services).backups.updateOne({ _id: row._id, state: 'running' }, { $set: { cancelRequested: true } });
  try {
    await services.temporal.client.workflow.getHandle(backupWorkflowId(row.workspaceId, row._id)).signal(cancelBackupSignal);
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
    // No run left to hear it (its history is gone): the cancellation is done here, the same way.
    await endBackup(services, ref, { state: 'cancelled', error: null });
  }
}

/** Removes a finished backup: its archive, then its rows. A running one must be cancelled first. */
export async function deleteBackup(services: Services, row: BackupRow): Promise<void> {
  if (row.state === 'running') throw new ConflictError('Backup is running: cancel it first');
  await backupStore(services.config).remove(backupPrefix(row.workspaceId, row._id));
  const { backups, parts } = backupCollections(services);
  await parts.deleteMany({ backupId: row._id });
  await backups.deleteOne({ _id: row._id });
}

/**
 * Checks the archive without reading its parts (verify.ts `checkArchive`: a foreign, replaced or
 * incomplete archive, or a part of the wrong size, is a 409 naming why), records the restore as
 * `running` and starts its workflow, whose first step hashes every part before anything changes
 * (a mismatch ends the restore `failed`, the workspace untouched): the archive is read once, not
 * twice (docs/backups.md, "Verification").
 */
export async function startRestore(services: Services, workspaceId: string, backupId: string): Promise<RestoreRow> {
  const workspace = await idleWorkspace(services, workspaceId);
  const backup = await backupCollections(services).backups.findOne({ _id: backupId });
  if (!backup) throw new NotFoundError('Backup not found');
  try {
    await checkArchive(backupStore(services.config), backup, workspaceId);
  } catch (error) {
    if (error instanceof BackupVerificationError) throw new ConflictError(error.message);
    throw error;
  }
  const now = services.clock.now();
  const row: RestoreRow = {
    _id: newId(),
    workspaceId,
    backupId,
    state: 'running',
    previousStatus: workspace.status === 'suspended' ? 'suspended' : 'active',
    progress: { collectionsDone: 0, documents: 0, mediaFiles: 0 },
    error: null,
    createdAt: now,
    finishedAt: null,
    updatedAt: now,
  };
  const { restores } = backupCollections(services);
  await restores.insertOne(row);
  const ref: RestoreRef = { workspaceId, restoreId: row._id, backupId };
  try {
    await services.temporal.client.workflow.start(restoreWorkflowType, {
      taskQueue: services.temporal.taskQueue,
      workflowId: restoreWorkflowId(workspaceId, row._id),
      args: [ref],
    });
  } catch (error) {
    services.log.error({ err: error, workspaceId }, 'restore workflow not started');
    await restores.updateOne({ _id: row._id }, { $set: { state: 'failed', error: 'The workflow engine is unavailable', finishedAt: now } });
    throw new ServiceUnavailableError('The workflow engine is unavailable');
  }
  return row;
}

/**
 * At deletion (the platform feature's `stopWork`): a running backup of the workspace is stopped and
 * ends `cancelled` (what it stored removed, the hold released), a running restore ends `failed`;
 * neither touches the workspace after this returns. Answers how many of each.
 */
export async function stopWorkspaceBackups(services: Services, workspace: Workspace): Promise<{ backups: number; restores: number }> {
  const { backups, restores } = backupCollections(services);
  const running = await backups.find({ workspaceId: workspace._id, state: 'running' }).toArray();
  for (const row of running) {
    await stopWorkspaceWorkflow(services, workspace, backupWorkflowId(workspace._id, row._id));
    await endBackup(services, { workspaceId: workspace._id, backupId: row._id }, { state: 'cancelled', error: 'Cancelled: the workspace was deleted' });
  }
  const restoring = await restores.find({ workspaceId: workspace._id, state: 'running' }).toArray();
  for (const row of restoring) {
    await stopWorkspaceWorkflow(services, workspace, restoreWorkflowId(workspace._id, row._id));
    await failRestore(services, { workspaceId: workspace._id, restoreId: row._id, backupId: row.backupId }, 'Cancelled: the workspace was deleted');
  }
  return { backups: running.length, restores: restoring.length };
}
