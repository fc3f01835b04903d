import { ActivityFailure, ApplicationFailure, executeChild, proxyActivities } from '@temporalio/workflow';
import type { BackupActivities } from '../activities/backup.ts';
import { backupWorkflowId } from './contracts/backup.ts';
import type { CloneRef } from './contracts/clone.ts';
import { backupWorkflow } from './backup.ts';

// The steps heartbeat and are idempotent (a collection or bucket is emptied and loaded again whole;
// the parts done are recorded on the new workspace's row), so a killed worker's step resumes elsewhere.
const { cloneSourceBackup, verifyClone, cloneCollections, cloneBuckets, finishClone, failClone } = proxyActivities<BackupActivities>({
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
});

const messageOf = (error: unknown) => {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  return cause instanceof ApplicationFailure || cause instanceof Error ? cause.message : String(cause);
};

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
    await failClone(ref, backupId, messageOf(error));
    return 'failed';
  }
}
