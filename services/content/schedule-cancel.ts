import { WorkflowNotFoundError } from '@temporalio/common';
import type { OperationContext } from '../core/context.ts';
import { scheduleWorkflowId } from '../../workflows/contracts/schedule.ts';

// Apart from schedule.ts (which types its start with the workflow itself) so the write path can
// stop a schedule without importing the workflow: activities → write path → workflow would be a cycle.
/** Stops the entry's schedule workflow, if any (null dates, trashed entry). */
export async function cancelSchedule(ctx: OperationContext, entryId: string): Promise<void> {
  try {
    await ctx.services.temporal.client.workflow.getHandle(scheduleWorkflowId(ctx.workspace._id, entryId)).terminate('schedule cancelled');
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return;
    // Already finished workflows answer "not found" on some servers and "already completed" on others.
    if (/not found|already completed|completed/i.test(String((error as Error).message))) return;
    throw error;
  }
}
