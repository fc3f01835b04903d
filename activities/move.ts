import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Services } from '../services/core/context.ts';
import { MOVE_STOPPED, type MoveRef } from '../workflows/contracts/move.ts';
import { abortMove, beginMove, catchUp, cleanUp, copyData, finishSwitch, freezeWrites, MoveStopError, type Beat } from '../services/platform/placement/move.ts';

/** Runs a step with the activity's heartbeat; a step that retrying cannot mend fails for good, naming why. */
function step<A extends unknown[], R>(run: (beat: Beat, ...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args) => {
    const context = Context.current();
    const beat = () => context.heartbeat();
    const timer = setInterval(beat, 2000);
    try {
      return await run(beat, ...args);
    } catch (error) {
      if (error instanceof MoveStopError) throw ApplicationFailure.nonRetryable(error.message, MOVE_STOPPED);
      throw error;
    } finally {
      clearInterval(timer);
    }
  };
}

/** The move workflow's steps (services/platform/placement/move.ts); each is idempotent. */
export function createMoveActivities(services: Services) {
  return {
    beginMove: step((_beat, ref: MoveRef) => beginMove(services, ref)),
    copyData: step((beat, ref: MoveRef) => copyData(services, ref, beat)),
    catchUp: step((beat, ref: MoveRef) => catchUp(services, ref, beat)),
    freezeWrites: step((beat, ref: MoveRef) => freezeWrites(services, ref, beat)),
    finishSwitch: step((beat, ref: MoveRef) => finishSwitch(services, ref, beat)),
    cleanUp: step((_beat, ref: MoveRef) => cleanUp(services, ref)),
    abortMove: step((_beat, ref: MoveRef, error: string) => abortMove(services, ref, error)),
  };
}

export type MoveActivities = ReturnType<typeof createMoveActivities>;
