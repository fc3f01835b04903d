import { ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import type { Services } from '../../core/context.ts';
import type { z } from 'zod';
import type { BackupSchedule } from '../../tenancy/quota-model.ts';
import { backupScheduleId, scheduledBackupWorkflowId, scheduledBackupWorkflowType, type ScheduledBackupInput } from '../../../workflows/contracts/backup.ts';
import { backupCollections } from './model.ts';
import { deleteBackup, recordBackup } from './control.ts';

const INTERVALS = { daily: '1 day', weekly: '7 days' } as const;

/**
 * Makes the workspace's Temporal Schedule (`backup-schedule:<workspaceId>`) say what its quotas
 * say: created or replaced when `backupSchedule` is set, deleted when it is not. A start that
 * would overlap a running one is skipped.
 */
export async function syncBackupSchedule(services: Services, workspaceId: string, schedule: z.infer<typeof BackupSchedule> | null): Promise<void> {
  const handle = services.temporal.client.schedule.getHandle(backupScheduleId(workspaceId));
  await deleteSchedule(handle);
  if (!schedule) return;
  const input: ScheduledBackupInput = { workspaceId, keep: schedule.keep };
  await services.temporal.client.schedule.create({
    scheduleId: backupScheduleId(workspaceId),
    spec: { intervals: [{ every: INTERVALS[schedule.every] }] },
    action: {
      type: 'startWorkflow',
      workflowType: scheduledBackupWorkflowType,
      workflowId: scheduledBackupWorkflowId(workspaceId),
      taskQueue: services.temporal.taskQueue,
      args: [input],
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP },
  });
}

async function deleteSchedule(handle: { delete(): Promise<void> }): Promise<boolean> {
  try {
    await handle.delete();
    return true;
  } catch (error) {
    if (error instanceof ScheduleNotFoundError) return false;
    throw error;
  }
}

/** At deletion (the platform feature's `stopWork`): no more backups are started for the workspace. */
export async function stopBackupSchedule(services: Services, workspaceId: string): Promise<number> {
  return (await deleteSchedule(services.temporal.client.schedule.getHandle(backupScheduleId(workspaceId)))) ? 1 : 0;
}

/** A scheduled start: its backup row, or null (skipped) when the workspace cannot be backed up now. */
export async function recordScheduledBackup(services: Services, workspaceId: string): Promise<string | null> {
  try {
    return (await recordBackup(services, workspaceId, 'scheduled'))._id;
  } catch (error) {
    services.log.info({ workspaceId, reason: error instanceof Error ? error.message : String(error) }, 'scheduled backup skipped');
    return null;
  }
}

/** Keeps the newest `keep` succeeded scheduled backups; older ones, and failed or cancelled scheduled ones, are deleted. */
export async function pruneScheduledBackups(services: Services, workspaceId: string, keep: number): Promise<number> {
  const rows = await backupCollections(services)
    .backups.find({ workspaceId, trigger: 'scheduled', state: { $ne: 'running' } })
    .sort({ _id: -1 })
    .toArray();
  const kept = rows.filter((row) => row.state === 'succeeded').slice(0, keep);
  const doomed = rows.filter((row) => !kept.includes(row));
  for (const row of doomed) await deleteBackup(services, row);
  return doomed.length;
}
