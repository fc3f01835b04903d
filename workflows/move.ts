import { proxyActivities } from '@temporalio/workflow';
import { failureMessage, LONG_STEPS } from './long-steps.ts';
import type { MoveActivities } from '../activities/move.ts';
import { MOVE_CATCH_UP_PASSES, MOVE_SWITCH_BELOW, type MoveRef } from './contracts/move.ts';

// Long steps (./long-steps.ts), each idempotent: it reads the move's row and does nothing once its step is past.
const { beginMove, copyData, catchUp, freezeWrites, finishSwitch, cleanUp, abortMove } = proxyActivities<MoveActivities>(LONG_STEPS);

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
    await abortMove(ref, failureMessage(error));
    return 'failed';
  }
}
