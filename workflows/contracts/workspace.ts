import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

// The contract of the workspace actor (`workspace:<id>`): everything the workflow, its activities
// and its callers share. Pure: only @temporalio/workflow (signal/query/update definitions), types
// and the order of the provisioning steps (a function of its arguments only).

/** The workflow type; equals the function's name exported from workflows/index.ts. */
export const workspaceWorkflowType = 'workspaceWorkflow';

/** One actor per workspace. */
export const workspaceWorkflowId = (workspaceId: string) => `workspace:${workspaceId}`;

/**
 * What the actor is asked to do. The workspace row in the platform database is the truth; each
 * command's activity reads it and moves it only from the states the command applies to, so a
 * repeated or late command does nothing.
 *  - provision: `provisioning` → `active` (database, indexes, first site, administrator)
 *  - suspend: `active` → `suspended`; reactivate: `suspended` → `active`
 *  - delete: anything → `deleting` → `deleted` (work cancelled, domains released; the database kept
 *    until the purge: at the end of the grace period, by the actor's own timer, or at once when asked)
 *  - undelete: `deleted` (not purged) → the status before the deletion, domains claimed again when free
 *  - purge: a deleted workspace's database dropped when due (the actor's timer sends it to itself)
 *  - indexes: brings the workspace database's indexes to the release's index version
 * `id` names one sending of a command, so its sender can wait for it (`workspaceCommandDoneUpdate`).
 */
export type WorkspaceCommand = (
  | { kind: 'provision' }
  | { kind: 'suspend' }
  | { kind: 'reactivate' }
  | { kind: 'delete'; dropDatabase: boolean }
  | { kind: 'undelete' }
  | { kind: 'purge' }
  | { kind: 'indexes' }
) & { id?: string };

export interface WorkspaceWorkflowInput {
  workspaceId: string;
  /** Commands carried over by continue-as-new. */
  queue?: WorkspaceCommand[];
  /** When the purge of the deleted workspace is due (ms since the epoch), carried over by continue-as-new. */
  purgeAt?: number | null;
}

/**
 * The purge's next step (its activity reads the workspace row): wait until `purgeAt`, nothing (not
 * deleted, purged, held), or purge now, after running the final backup `finalBackupId` when set.
 */
export type PurgeStep = { kind: 'wait'; purgeAt: number } | { kind: 'none' } | { kind: 'purge'; finalBackupId: string | null };

export interface WorkspaceActorState {
  running: WorkspaceCommand['kind'] | null;
  queued: WorkspaceCommand['kind'][];
  done: number;
  /** The purge timer's deadline while the actor waits on it (ms since the epoch). */
  purgeAt?: number | null;
}

export const workspaceCommandSignal = defineSignal<[WorkspaceCommand]>('workspaceCommand');
export const workspaceStateQuery = defineQuery<WorkspaceActorState>('workspaceState');
/**
 * Completes once the command with this id has run; rejected when the run does not know the id
 * (the run that took it has ended, so it ran). The lifecycle routes wait on this, not on the database.
 */
export const workspaceCommandDoneUpdate = defineUpdate<void, [commandId: string]>('workspaceCommandDone');

/** The steps of the `provision` command, each idempotent and driven by the workspace row. */
export interface ProvisionSteps {
  /** The database and its indexes; false when there is nothing (more) to provision. */
  provisionWorkspaceDatabase(workspaceId: string): Promise<boolean>;
  /** The first site, with each feature's provisioning (the administrator). */
  provisionWorkspaceSite(workspaceId: string): Promise<void>;
  /** `provisioning` → `active`. */
  activateProvisionedWorkspace(workspaceId: string): Promise<void>;
}

/**
 * The one way a workspace is provisioned: the actor runs it with its activities, and the bootstrap
 * (before any worker runs) and test fixtures with the same steps in process
 * (`services/platform/provisioning.ts`).
 */
export async function runProvisionSteps(steps: ProvisionSteps, workspaceId: string): Promise<void> {
  if (await steps.provisionWorkspaceDatabase(workspaceId)) {
    await steps.provisionWorkspaceSite(workspaceId);
    await steps.activateProvisionedWorkspace(workspaceId);
  }
}
