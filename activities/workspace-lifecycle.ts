import type { Services } from '../services/core/context.ts';
import { dropWorkspaceDatabase, releaseDomains, setWorkspaceStatus } from '../services/platform/lifecycle.ts';

/** Each step is idempotent: a retried activity finds the work done and does nothing more. */
export function createWorkspaceLifecycleActivities(services: Services) {
  return {
    async markWorkspaceDeleted(workspaceId: string): Promise<void> {
      await setWorkspaceStatus(services, workspaceId, 'deleted');
    },
    async releaseWorkspaceDomains(workspaceId: string): Promise<number> {
      return releaseDomains(services, workspaceId);
    },
    async dropWorkspaceDatabase(workspaceId: string): Promise<void> {
      await dropWorkspaceDatabase(services, workspaceId);
    },
  };
}
