// The contract of workspace moves between clusters (docs/placement.md): shared by the workflow,
// its activities and the platform operation that starts it. Pure: names and types only.

/** The workflow type; equals the function's name exported from workflows/index.ts. */
export const moveWorkflowType = 'moveWorkflow';

/** One run per move; a workspace's moves are also serialized by its row (`move`). */
export const moveWorkflowId = (workspaceId: string, moveId: string) => `move:${workspaceId}:${moveId}`;

export interface MoveRef {
  workspaceId: string;
  moveId: string;
}

/** Catch-up passes while writes run, before the switch (each copies what was written during the one before). */
export const MOVE_CATCH_UP_PASSES = 5;
/** A pass that copied at most this many recorded writes leaves little for the switch: switch now. */
export const MOVE_SWITCH_BELOW = 200;

/** Error type the activities raise as non-retryable (ApplicationFailure type). */
export const MOVE_STOPPED = 'MoveStopped';
