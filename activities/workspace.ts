import type { Services } from '../services/core/context.ts';
import { setWorkspaceStatus } from '../services/platform/lifecycle.ts';
import {
  activateProvisionedWorkspace,
  provisionWorkspaceDatabase,
  provisionWorkspaceSite,
  upgradeWorkspaceIndexes,
} from '../services/platform/provisioning.ts';
import {
  beginWorkspaceDeletion,
  cancelWorkspaceWork,
  finishWorkspaceDeletion,
  releaseWorkspaceDomainClaims,
} from '../services/platform/deletion.ts';

/** The workspace actor's steps (`workflows/workspace.ts`). Each reads the workspace row first and is idempotent. */
export function createWorkspaceActivities(services: Services) {
  return {
    provisionWorkspaceDatabase: (workspaceId: string) => provisionWorkspaceDatabase(services, workspaceId),
    provisionWorkspaceSite: (workspaceId: string) => provisionWorkspaceSite(services, workspaceId),
    activateProvisionedWorkspace: (workspaceId: string) => activateProvisionedWorkspace(services, workspaceId),
    async suspendWorkspace(workspaceId: string): Promise<void> {
      await setWorkspaceStatus(services, workspaceId, 'suspended');
    },
    async reactivateWorkspace(workspaceId: string): Promise<void> {
      await setWorkspaceStatus(services, workspaceId, 'active');
    },
    beginWorkspaceDeletion: (workspaceId: string, dropDatabase: boolean) => beginWorkspaceDeletion(services, workspaceId, dropDatabase),
    cancelWorkspaceWork: (workspaceId: string) => cancelWorkspaceWork(services, workspaceId),
    releaseWorkspaceDomainClaims: (workspaceId: string) => releaseWorkspaceDomainClaims(services, workspaceId),
    finishWorkspaceDeletion: (workspaceId: string) => finishWorkspaceDeletion(services, workspaceId),
    upgradeWorkspaceIndexes: (workspaceId: string) => upgradeWorkspaceIndexes(services, workspaceId),
  };
}

export type WorkspaceActivities = ReturnType<typeof createWorkspaceActivities>;
