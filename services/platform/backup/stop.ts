import type { Services } from '../../core/context.ts';
import { ConflictError } from '../../core/errors.ts';
import { backupCollections } from './model.ts';
import { cancelBackup } from './control.ts';
import { stopBackupSchedule } from './schedule.ts';

/**
 * At deletion (the platform feature's `stopWork`): no backup of the workspace is started any more,
 * a running one is cancelled (its workflow removes what it wrote and releases the hold), and a
 * running restore ends `failed` ("Workspace deleted"): its steps check the row before each
 * collection and bucket, so it stops within one. A clone into the workspace stops the same way
 * (its steps find it no longer `provisioning`); a clone from it fails with its source backup.
 */
export async function stopBackupWork(services: Services, workspaceId: string): Promise<Record<string, number>> {
  const backupSchedules = await stopBackupSchedule(services, workspaceId);
  const { backups, restores } = backupCollections(services);
  let cancelled = 0;
  for (const row of await backups.find({ workspaceId, state: 'running' }).toArray()) {
    try {
      await cancelBackup(services, row);
      cancelled += 1;
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
    }
  }
  const now = services.clock.now();
  const ended = await restores.updateMany(
    { workspaceId, state: 'running' },
    { $set: { state: 'failed', error: 'Workspace deleted', finishedAt: now, updatedAt: now } },
  );
  return { backupSchedules, backups: cancelled, restores: ended.modifiedCount };
}
