import type { OperationContext, Services } from '../core/context.ts';
import type { Workspace } from '../core/tenants.ts';
import { contentCollections } from './model.ts';
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
  await startScheduleWorkflow(ctx.services, { workspaceId: ctx.workspace._id, siteId: ctx.site._id, ...input }, 'TERMINATE_EXISTING');
}

async function startScheduleWorkflow(services: Services, input: ScheduleInput, onRunning: 'TERMINATE_EXISTING' | 'USE_EXISTING'): Promise<void> {
  const { client, taskQueue } = services.temporal;
  await client.workflow.start<typeof scheduleEntryWorkflow>(scheduleEntryWorkflowType, {
    taskQueue,
    workflowId: scheduleWorkflowId(input.workspaceId, input.entryId),
    workflowIdConflictPolicy: onRunning,
    args: [input],
  });
}

/**
 * An undeleted workspace (`Feature.resumeWork`): every entry's stored schedule is in Temporal again
 * (one already running is kept, so a retry starts nothing twice). A date passed meanwhile is
 * served at once by its workflow. Answers how many.
 */
export async function resumeSchedules(services: Services, workspace: Workspace): Promise<number> {
  let resumed = 0;
  const entries = contentCollections(services.workspaceDb(workspace)).entries.find(
    { schedule: { $ne: null } },
    { projection: { _id: 1, siteId: 1, schedule: 1 } },
  );
  for await (const entry of entries) {
    const schedule = entry.schedule!;
    await startScheduleWorkflow(
      services,
      {
        workspaceId: workspace._id,
        siteId: entry.siteId,
        entryId: entry._id,
        token: schedule.token,
        publishOn: schedule.publishOn?.toISOString() ?? null,
        unpublishOn: schedule.unpublishOn?.toISOString() ?? null,
      },
      'USE_EXISTING',
    );
    resumed += 1;
  }
  return resumed;
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
