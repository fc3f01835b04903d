// The contract of the schedule workflow (one per entry): shared by the workflow, its activities and
// the content feature that starts it. Pure: types and strings only.

/** The workflow type; equals the function's name exported from workflows/index.ts. */
export const scheduleEntryWorkflowType = 'scheduleEntryWorkflow';

export const scheduleWorkflowId = (workspaceId: string, entryId: string) => `schedule:${workspaceId}:${entryId}`;

/** What the schedule workflow carries: ids, the dates, and the token of the schedule it serves. */
export interface ScheduleInput {
  workspaceId: string;
  siteId: string;
  entryId: string;
  /** Identifies this schedule; an activity of a replaced schedule finds another token and does nothing. */
  token: string;
  publishOn: string | null;
  unpublishOn: string | null;
}

export interface ScheduleOutcome {
  published?: string;
  unpublished?: string;
}
