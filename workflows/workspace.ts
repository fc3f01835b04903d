import { continueAsNew, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { WorkspaceActivities } from '../activities/workspace.ts';
import { workspaceCommandSignal, workspaceStateQuery, type WorkspaceCommand, type WorkspaceWorkflowInput } from './contracts/workspace.ts';

// Retried without a cap: every step is idempotent, and a workspace must not stay half-provisioned
// or half-deleted because the database was away for a while.
const acts = proxyActivities<WorkspaceActivities>({
  startToCloseTimeout: '2 minutes',
  // The steps heartbeat every second: a killed worker's step is retried elsewhere within seconds.
  heartbeatTimeout: '5 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

async function run(workspaceId: string, command: WorkspaceCommand): Promise<void> {
  switch (command.kind) {
    case 'provision':
      if (await acts.provisionWorkspaceDatabase(workspaceId)) {
        await acts.provisionWorkspaceSite(workspaceId);
        await acts.activateProvisionedWorkspace(workspaceId);
      }
      return;
    case 'suspend':
      await acts.suspendWorkspace(workspaceId);
      return;
    case 'reactivate':
      await acts.reactivateWorkspace(workspaceId);
      return;
    case 'delete':
      await acts.beginWorkspaceDeletion(workspaceId, command.dropDatabase);
      await acts.cancelWorkspaceWork(workspaceId);
      await acts.releaseWorkspaceDomainClaims(workspaceId);
      await acts.finishWorkspaceDeletion(workspaceId);
      return;
    case 'indexes':
      await acts.upgradeWorkspaceIndexes(workspaceId);
      return;
  }
}

/**
 * The actor of one workspace (`workspace:<id>`): every lifecycle step of that workspace runs here,
 * one after another, so a suspension never races a deletion. Commands arrive as signals
 * (signal-with-start); the actor ends when nothing is queued and the next command starts it again.
 */
export async function workspaceWorkflow(input: WorkspaceWorkflowInput): Promise<void> {
  const queue: WorkspaceCommand[] = [...(input.queue ?? [])];
  let running: WorkspaceCommand['kind'] | null = null;
  let done = 0;
  setHandler(workspaceCommandSignal, (command) => {
    queue.push(command);
  });
  setHandler(workspaceStateQuery, () => ({ running, queued: queue.map((c) => c.kind), done }));

  while (queue.length > 0) {
    const command = queue.shift()!;
    running = command.kind;
    await run(input.workspaceId, command);
    running = null;
    done += 1;
    if (workflowInfo().continueAsNewSuggested && queue.length > 0) {
      await continueAsNew<typeof workspaceWorkflow>({ workspaceId: input.workspaceId, queue });
    }
  }
}
