import { proxyActivities, sleep } from '@temporalio/workflow';
import type * as activities from '../activities/schedule.ts';
import type { ScheduleInput, ScheduleOutcome } from './contracts/schedule.ts';

const { publishScheduledEntry, unpublishScheduledEntry } = proxyActivities<ReturnType<typeof activities.createScheduleActivities>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/** Durable timer until `date` (workflow time; zero or negative means now). */
async function waitUntil(date: string): Promise<void> {
  const ms = new Date(date).getTime() - Date.now();
  if (ms > 0) await sleep(ms);
}

/**
 * One per entry (`schedule:<workspaceId>:<entryId>`): sleeps until publishOn and publishes, then
 * until unpublishOn and returns the entry to draft. Replaced (terminated and restarted) when the
 * schedule changes; survives worker and server restarts because the timers are durable.
 */
export async function scheduleEntryWorkflow(input: ScheduleInput): Promise<ScheduleOutcome> {
  const result: ScheduleOutcome = {};
  if (input.publishOn) {
    await waitUntil(input.publishOn);
    result.published = await publishScheduledEntry(input);
  }
  if (input.unpublishOn) {
    await waitUntil(input.unpublishOn);
    result.unpublished = await unpublishScheduledEntry(input);
  }
  return result;
}
