import { ActivityFailure, ApplicationFailure, type ActivityOptions } from '@temporalio/workflow';

// What the backup, restore, clone and move workflows share (pure: no state, no activities): how
// their long steps run, and how a failed step is told in the row's `error`.

/**
 * Every such step heartbeats (a killed worker is noticed within seconds and the step retried
 * elsewhere) and is idempotent; ten attempts, then the workflow's own failure path runs.
 */
export const LONG_STEPS: ActivityOptions = {
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
};

/** Why a step failed, as its row says it: the activity's own message, not Temporal's wrapping. */
export function failureMessage(error: unknown): string {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  return cause instanceof ApplicationFailure || cause instanceof Error ? cause.message : String(cause);
}
