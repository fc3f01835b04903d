import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Services } from '../services/core/context.ts';
import type { BackupEnd, BackupRef, RestoreRef } from '../workflows/contracts/backup.ts';
import type { CloneRef } from '../workflows/contracts/clone.ts';
import { cloneBuckets, cloneCollections, cloneSourceBackup, failClone, finishClone, verifyClone } from '../services/platform/backup/clone.ts';
import { BackupStopError, type Beat } from '../services/platform/backup/steps.ts';
import { beginBackup, copyCollections, copyMediaBatch, endBackup, finishBackup } from '../services/platform/backup/snapshot.ts';
import { pruneScheduledBackups, recordScheduledBackup } from '../services/platform/backup/schedule.ts';
import { failRestore, finishRestore, restoreBuckets, restoreCollections, suspendForRestore, verifyRestore } from '../services/platform/backup/restore.ts';

/**
 * Runs a step with the activity's heartbeat (a killed worker is noticed within the heartbeat
 * timeout) and turns a step that retrying cannot mend into a non-retryable failure naming why.
 */
function step<A extends unknown[], R>(run: (beat: Beat, ...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args) => {
    const context = Context.current();
    const beat = () => context.heartbeat();
    const timer = setInterval(beat, 2000);
    try {
      return await run(beat, ...args);
    } catch (error) {
      if (error instanceof BackupStopError) throw ApplicationFailure.nonRetryable(error.message, error.type);
      throw error;
    } finally {
      clearInterval(timer);
    }
  };
}

/** The backup, restore and clone workflows' steps (services/platform/backup/); each is idempotent. */
export function createBackupActivities(services: Services) {
  return {
    beginBackup: step((beat, ref: BackupRef) => beginBackup(services, ref, beat)),
    copyCollections: step((beat, ref: BackupRef, names: string[]) => copyCollections(services, ref, names, beat)),
    copyMediaBatch: step((beat, ref: BackupRef, bucket: string) => copyMediaBatch(services, ref, bucket, beat)),
    finishBackup: step((_beat, ref: BackupRef) => finishBackup(services, ref)),
    endBackup: step((_beat, ref: BackupRef, end: BackupEnd) => endBackup(services, ref, end)),
    verifyRestore: step((beat, ref: RestoreRef) => verifyRestore(services, ref, beat)),
    suspendForRestore: step((beat, ref: RestoreRef) => suspendForRestore(services, ref, beat)),
    restoreCollections: step((beat, ref: RestoreRef, names: string[]) => restoreCollections(services, ref, names, beat)),
    restoreBuckets: step((beat, ref: RestoreRef, buckets: string[]) => restoreBuckets(services, ref, buckets, beat)),
    finishRestore: step((beat, ref: RestoreRef) => finishRestore(services, ref, beat)),
    failRestore: step((_beat, ref: RestoreRef, error: string) => failRestore(services, ref, error)),
    recordScheduledBackup: step((_beat, workspaceId: string) => recordScheduledBackup(services, workspaceId)),
    pruneScheduledBackups: step((_beat, workspaceId: string, keep: number) => pruneScheduledBackups(services, workspaceId, keep)),
    cloneSourceBackup: step((_beat, ref: CloneRef) => cloneSourceBackup(services, ref)),
    verifyClone: step((beat, ref: CloneRef, backupId: string) => verifyClone(services, ref, backupId, beat)),
    cloneCollections: step((beat, ref: CloneRef, backupId: string, names: string[]) => cloneCollections(services, ref, backupId, names, beat)),
    cloneBuckets: step((beat, ref: CloneRef, backupId: string, buckets: string[]) => cloneBuckets(services, ref, backupId, buckets, beat)),
    finishClone: step((_beat, ref: CloneRef, backupId: string) => finishClone(services, ref, backupId)),
    failClone: step((_beat, ref: CloneRef, backupId: string | null, error: string) => failClone(services, ref, backupId, error)),
  };
}

export type BackupActivities = ReturnType<typeof createBackupActivities>;
