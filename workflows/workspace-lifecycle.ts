import { proxyActivities } from '@temporalio/workflow';
import type * as lifecycle from '../activities/workspace-lifecycle.ts';

const { markWorkspaceDeleted, releaseWorkspaceDomains, dropWorkspaceDatabase } = proxyActivities<
  ReturnType<typeof lifecycle.createWorkspaceLifecycleActivities>
>({ startToCloseTimeout: '2 minutes', retry: { maximumAttempts: 10 } });

export interface DeleteWorkspaceInput {
  workspaceId: string;
  dropDatabase: boolean;
}

/**
 * Deleting a workspace is several steps against two databases with no transaction between them;
 * as a workflow it finishes even if the gateway or worker dies half-way. Id: `workspace-delete:<id>`.
 */
export interface DeleteWorkspaceOutcome {
  domainsReleased: number;
  databaseDropped: boolean;
}

export async function deleteWorkspaceWorkflow(input: DeleteWorkspaceInput): Promise<DeleteWorkspaceOutcome> {
  await markWorkspaceDeleted(input.workspaceId);
  const domainsReleased = await releaseWorkspaceDomains(input.workspaceId);
  if (input.dropDatabase) await dropWorkspaceDatabase(input.workspaceId);
  return { domainsReleased, databaseDropped: input.dropDatabase };
}
