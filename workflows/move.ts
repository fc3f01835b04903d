import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { MoveActivities } from '../activities/move.ts';
import { MOVE_CATCH_UP_PASSES, MOVE_SWITCH_BELOW, type MoveRef } from './contracts/move.ts';

// Every step heartbeats (a killed worker is noticed within seconds and the step retried elsewhere)
// and is idempotent: it reads the move's row and does nothing once its step is past.
const { beginMove, copyData, catchUp, freezeWrites, finishSwitch, cleanUp, abortMove } = proxyActivities<MoveActivities>({
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
});

const messageOf = (error: unknown) => {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  return cause instanceof ApplicationFailure || cause instanceof Error ? cause.message : String(cause);
};

/**
 * One move of a workspace to another cluster (id: ./contracts/move.ts; docs/placement.md): copy
 * while writes run, catch up with what they changed, refuse writes for the switch, catch up the
 * last, verify, switch, drop the source. The step and progress live in the move's row.
 */
export async function moveWorkflow(ref: MoveRef): Promise<string> {
  try {
    await beginMove(ref);
    await copyData(ref);
    for (let pass = 0; pass < MOVE_CATCH_UP_PASSES; pass++) {
      if ((await catchUp(ref)) <= MOVE_SWITCH_BELOW) break;
    }
    await freezeWrites(ref);
    await finishSwitch(ref);
    await cleanUp(ref);
    return 'succeeded';
  } catch (error) {
    await abortMove(ref, messageOf(error));
    return 'failed';
  }
}
