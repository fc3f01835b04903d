import { ApplicationFailure, executeChild, proxyActivities } from '@temporalio/workflow';
import { failureMessage, LONG_STEPS } from './long-steps.ts';
import type { BackupActivities } from '../activities/backup.ts';
import { backupWorkflowId } from './contracts/backup.ts';
import type { CloneRef } from './contracts/clone.ts';
import { backupWorkflow } from './backup.ts';

// Long steps (./long-steps.ts), each idempotent: a collection or bucket is emptied and loaded again
// whole, the parts done recorded on the new workspace's row.
const { cloneSourceBackup, verifyClone, cloneCollections, cloneBuckets, finishClone, failClone } = proxyActivities<BackupActivities>(LONG_STEPS);

/**
 * A new workspace from a backup, or from a living workspace through a fresh backup of it (a child
 * `backup:<source>:<backupId>`, the same workflow as any backup: consistent under its write hold):
 * verify the archive before anything is written, load every collection and bucket with the
 * clone's fix-ups, then sites, administrator, caches and `active`. A failure leaves nothing: the
 * domains released, the database dropped, the row `deleted` with the reason.
 */
export async function cloneWorkflow(ref: CloneRef): Promise<string> {
  let backupId: string | null = ref.backupId ?? null;
  try {
    if (!backupId) {
      backupId = await cloneSourceBackup(ref);
      const state = await executeChild(backupWorkflow, {
        workflowId: backupWorkflowId(ref.sourceWorkspaceId, backupId),
        args: [{ workspaceId: ref.sourceWorkspaceId, backupId }],
      });
      if (state !== 'succeeded') throw ApplicationFailure.nonRetryable(`The backup of the source workspace ${state}`);
    }
    const plan = await verifyClone(ref, backupId);
    await cloneCollections(ref, backupId, plan.collections);
    await cloneBuckets(ref, backupId, plan.buckets);
    await finishClone(ref, backupId);
    return 'succeeded';
  } catch (error) {
    await failClone(ref, backupId, failureMessage(error));
    return 'failed';
  }
}
