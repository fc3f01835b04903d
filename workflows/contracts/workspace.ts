import { defineQuery, defineSignal } from '@temporalio/workflow';

// The contract of the workspace actor (`workspace:<id>`): everything the workflow, its activities
// and its callers share. Pure: only @temporalio/workflow (signal/query definitions) and types.

/** The workflow type; equals the function's name exported from workflows/index.ts. */
export const workspaceWorkflowType = 'workspaceWorkflow';

/** One actor per workspace. */
export const workspaceWorkflowId = (workspaceId: string) => `workspace:${workspaceId}`;

/**
 * What the actor is asked to do. The workspace row in the platform database is the truth; each
 * command's activity reads it and moves it only from the states the command applies to, so a
 * repeated or late command does nothing.
 *  - provision: `provisioning` → `active` (database, indexes, first site, domains, administrator)
 *  - suspend: `active` → `suspended`; reactivate: `suspended` → `active`
 *  - delete: anything → `deleting` → `deleted` (work cancelled, domains released, database dropped when asked)
 *  - indexes: brings the workspace database's indexes to the release's index version
 */
export type WorkspaceCommand =
  | { kind: 'provision' }
  | { kind: 'suspend' }
  | { kind: 'reactivate' }
  | { kind: 'delete'; dropDatabase: boolean }
  | { kind: 'indexes' };

export interface WorkspaceWorkflowInput {
  workspaceId: string;
  /** Commands carried over by continue-as-new. */
  queue?: WorkspaceCommand[];
}

export interface WorkspaceActorState {
  running: WorkspaceCommand['kind'] | null;
  queued: WorkspaceCommand['kind'][];
  done: number;
}


export const workspaceCommandSignal = defineSignal<[WorkspaceCommand]>('workspaceCommand');
export const workspaceStateQuery = defineQuery<WorkspaceActorState>('workspaceState');
