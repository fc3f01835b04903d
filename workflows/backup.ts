import { executeChild, proxyActivities, setHandler } from '@temporalio/workflow';
import { failureMessage, LONG_STEPS } from './long-steps.ts';
import type { BackupActivities } from '../activities/backup.ts';
import { backupWorkflowId, cancelBackupSignal, type BackupRef, type RestoreRef, type ScheduledBackupInput } from './contracts/backup.ts';

// Long steps (./long-steps.ts), each idempotent: a collection or media file is written whole under
// its final name or not at all.
const {
  beginBackup,
  copyCollections,
  copyMediaBatch,
  finishBackup,
  endBackup,
  verifyRestore,
  suspendForRestore,
  restoreCollections,
  restoreBuckets,
  finishRestore,
  failRestore,
  recordScheduledBackup,
  pruneScheduledBackups,
} = proxyActivities<BackupActivities>(LONG_STEPS);

/**
 * One backup of a workspace (id and signal: ./contracts/backup.ts): hold its writes, copy every
 * collection and every GridFS file into the backup store, write the manifest, release the hold.
 * The state and progress live in the backup's row (the activities write them), so GET needs no worker.
 */
export async function backupWorkflow(ref: BackupRef): Promise<string> {
  let cancelled = false;
  setHandler(cancelBackupSignal, () => void (cancelled = true));
  try {
    const plan = await beginBackup(ref);
    if (!(await copyCollections(ref, plan.collections))) cancelled = true;
    for (const bucket of plan.buckets) {
      while (!cancelled && !(await copyMediaBatch(ref, bucket)).done);
    }
    if (cancelled) {
      await endBackup(ref, { state: 'cancelled', error: null });
      return 'cancelled';
    }
    await finishBackup(ref);
    return 'succeeded';
  } catch (error) {
    await endBackup(ref, { state: 'failed', error: failureMessage(error) });
    return 'failed';
  }
}

/**
 * One restore of a backup into its own workspace: verify every part against the manifest before
 * anything changes, suspend the workspace through its actor, replace each collection and bucket,
 * then bring the workspace back as it was (caches and generations moved). A failure before the
 * suspension changes nothing; after it, the workspace stays suspended (half-restored data is never served).
 */
export async function restoreWorkflow(ref: RestoreRef): Promise<string> {
  try {
    const plan = await verifyRestore(ref);
    await suspendForRestore(ref);
    await restoreCollections(ref, plan.collections);
    await restoreBuckets(ref, plan.buckets);
    await finishRestore(ref);
    return 'succeeded';
  } catch (error) {
    await failRestore(ref, failureMessage(error));
    return 'failed';
  }
}

/**
 * One start of a workspace's backup schedule: records a `scheduled` backup (none when a backup or
 * restore of the workspace runs, or it is not active: that start is skipped), runs it as a child
 * (`backup:<workspaceId>:<backupId>`, like a manual one), then keeps the last `keep` scheduled ones.
 */
export async function scheduledBackupWorkflow(input: ScheduledBackupInput): Promise<string> {
  const backupId = await recordScheduledBackup(input.workspaceId);
  if (!backupId) return 'skipped';
  const ref: BackupRef = { workspaceId: input.workspaceId, backupId };
  const state = await executeChild(backupWorkflow, { workflowId: backupWorkflowId(ref.workspaceId, backupId), args: [ref] });
  await pruneScheduledBackups(input.workspaceId, input.keep);
  return state;
}
