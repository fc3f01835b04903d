// The contract of a workspace clone (docs/backups.md, "Clone"): shared by the workflow, its
// activities and `POST /tenants { fromBackup | fromWorkspace }`. Pure: names and types only.

/** The workflow type; equals the function's name exported from workflows/index.ts. */
export const cloneWorkflowType = 'cloneWorkflow';

/** One run per new workspace. */
export const cloneWorkflowId = (workspaceId: string) => `clone:${workspaceId}`;

export interface CloneRef {
  /** The new workspace (its row says `provisioning` and carries the clone's spec until it is active). */
  workspaceId: string;
  sourceWorkspaceId: string;
  /** The backup cloned; absent for `fromWorkspace`: a fresh backup of the source is taken first (`cloneSourceBackup`). */
  backupId?: string;
}
