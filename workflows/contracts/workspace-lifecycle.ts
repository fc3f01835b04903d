// The contract of the workspace deletion workflow: shared by the workflow, its activities and the
// platform operation that runs it. Pure: types and strings only.
// (Input/output types still live in workflows/workspace-lifecycle.ts while the workspace actor is
// written; they move here with it.)
export type { DeleteWorkspaceInput, DeleteWorkspaceOutcome } from '../workspace-lifecycle.ts';

/** The workflow type; equals the function's name exported from workflows/index.ts. */
export const deleteWorkspaceWorkflowType = 'deleteWorkspaceWorkflow';

export const deleteWorkspaceWorkflowId = (workspaceId: string) => `workspace-delete:${workspaceId}`;
