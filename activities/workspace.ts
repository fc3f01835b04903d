import { Context } from '@temporalio/activity';
import type { Services } from '../services/core/context.ts';
import { setWorkspaceStatus } from '../services/platform/lifecycle.ts';
import {
  activateProvisionedWorkspace,
  provisionWorkspaceDatabase,
  provisionWorkspaceSite,
  upgradeWorkspaceIndexes,
} from '../services/platform/provisioning.ts';
import { beginWorkspaceDeletion, cancelWorkspaceWork, finishWorkspaceDeletion } from '../services/platform/deletion.ts';
import { releaseWorkspaceDomains } from '../services/platform/domains.ts';
import { prepareWorkspacePurge, purgeWorkspace } from '../services/platform/purge.ts';
import { resumeWorkspaceWork, undeleteWorkspace } from '../services/platform/undeletion.ts';

/**
 * Heartbeats while a step runs, so a killed worker is noticed within the workflow's heartbeat
 * timeout (seconds) instead of the step's whole start-to-close time; counts each step run by its
 * name (the activity type) and outcome.
 */
function stepRunner(services: Services) {
  return <A extends unknown[], R>(step: (...args: A) => Promise<R>): ((...args: A) => Promise<R>) =>
    async (...args) => {
      const context = Context.current();
      const timer = setInterval(() => context.heartbeat(), 1000);
      let outcome = 'failed';
      try {
        const result = await step(...args);
        outcome = 'succeeded';
        return result;
      } finally {
        clearInterval(timer);
        services.metrics.lifecycleSteps.inc({ step: context.info.activityType, outcome });
      }
    };
}

/** The workspace actor's steps (`workflows/workspace.ts`). Each reads the workspace row first and is idempotent. */
export function createWorkspaceActivities(services: Services) {
  const beating = stepRunner(services);
  return {
    provisionWorkspaceDatabase: beating((workspaceId: string) => provisionWorkspaceDatabase(services, workspaceId)),
    provisionWorkspaceSite: beating((workspaceId: string) => provisionWorkspaceSite(services, workspaceId)),
    activateProvisionedWorkspace: beating((workspaceId: string) => activateProvisionedWorkspace(services, workspaceId)),
    suspendWorkspace: beating(async (workspaceId: string): Promise<void> => {
      await setWorkspaceStatus(services, workspaceId, 'suspended');
    }),
    reactivateWorkspace: beating(async (workspaceId: string): Promise<void> => {
      await setWorkspaceStatus(services, workspaceId, 'active');
    }),
    beginWorkspaceDeletion: beating((workspaceId: string, dropDatabase: boolean) => beginWorkspaceDeletion(services, workspaceId, dropDatabase)),
    cancelWorkspaceWork: beating((workspaceId: string) => cancelWorkspaceWork(services, workspaceId)),
    // Step 3 of a deletion; the activity keeps the name the committed histories record.
    releaseWorkspaceDomainClaims: beating((workspaceId: string) => releaseWorkspaceDomains(services, workspaceId)),
    finishWorkspaceDeletion: beating((workspaceId: string) => finishWorkspaceDeletion(services, workspaceId)),
    prepareWorkspacePurge: beating((workspaceId: string) => prepareWorkspacePurge(services, workspaceId)),
    purgeWorkspace: beating((workspaceId: string) => purgeWorkspace(services, workspaceId)),
    undeleteWorkspace: beating((workspaceId: string) => undeleteWorkspace(services, workspaceId)),
    resumeWorkspaceWork: beating((workspaceId: string) => resumeWorkspaceWork(services, workspaceId)),
    upgradeWorkspaceIndexes: beating((workspaceId: string) => upgradeWorkspaceIndexes(services, workspaceId)),
  };
}

export type WorkspaceActivities = ReturnType<typeof createWorkspaceActivities>;
