import type { OperationContext } from '../core/context.ts';
import type { EntryDoc } from './model.ts';
import type { scheduleEntryWorkflow } from '../../workflows/schedule.ts';
import { scheduleEntryWorkflowType, scheduleWorkflowId, type ScheduleInput } from '../../workflows/contracts/schedule.ts';
import { cancelSchedule } from './schedule-cancel.ts';

export { scheduleWorkflowId, type ScheduleInput };
export { cancelSchedule };

/**
 * One workflow per entry, keyed by business id. A new schedule replaces the running one
 * (TERMINATE_EXISTING): its timers die with it, and the token check makes a late activity harmless.
 */
export async function startSchedule(ctx: OperationContext, input: Omit<ScheduleInput, 'workspaceId' | 'siteId'>): Promise<void> {
  const { client, taskQueue } = ctx.services.temporal;
  await client.workflow.start<typeof scheduleEntryWorkflow>(scheduleEntryWorkflowType, {
    taskQueue,
    workflowId: scheduleWorkflowId(ctx.workspace._id, input.entryId),
    workflowIdConflictPolicy: 'TERMINATE_EXISTING',
    args: [{ workspaceId: ctx.workspace._id, siteId: ctx.site._id, ...input } satisfies ScheduleInput],
  });
}

/** Puts an entry's stored schedule back in Temporal (after a failed replacement), or stops the one started. */
export async function restoreSchedule(ctx: OperationContext, entry: EntryDoc): Promise<void> {
  const schedule = entry.schedule;
  if (!schedule) return cancelSchedule(ctx, entry._id);
  await startSchedule(ctx, {
    entryId: entry._id,
    token: schedule.token,
    publishOn: schedule.publishOn?.toISOString() ?? null,
    unpublishOn: schedule.unpublishOn?.toISOString() ?? null,
  });
}
