import { HandlerUnfinishedPolicy } from '@temporalio/common';
import { allHandlersFinished, condition, continueAsNew, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { WorkspaceActivities } from '../activities/workspace.ts';
import {
  runProvisionSteps,
  workspaceCommandDoneUpdate,
  workspaceCommandSignal,
  workspaceStateQuery,
  type WorkspaceCommand,
  type WorkspaceWorkflowInput,
} from './contracts/workspace.ts';

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
      await runProvisionSteps(acts, workspaceId);
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
 * (signal-with-start, durable even with no worker up); their senders wait for them with the
 * `workspaceCommandDone` update. The actor ends when nothing is queued and the next command starts it again.
 */
export async function workspaceWorkflow(input: WorkspaceWorkflowInput): Promise<void> {
  const queue: WorkspaceCommand[] = [...(input.queue ?? [])];
  let running: WorkspaceCommand | null = null;
  let done = 0;
  const finished: string[] = [];
  setHandler(workspaceCommandSignal, (command) => {
    queue.push(command);
  });
  setHandler(workspaceStateQuery, () => ({ running: running?.kind ?? null, queued: queue.map((c) => c.kind), done }));
  setHandler(
    workspaceCommandDoneUpdate,
    async (commandId) => {
      await condition(() => finished.includes(commandId));
    },
    {
      // Rejected updates leave no trace in the history: the caller reads the workspace row instead.
      validator: (commandId) => {
        if (!finished.includes(commandId) && running?.id !== commandId && !queue.some((c) => c.id === commandId)) {
          throw new Error(`command ${commandId} is not known to this run`);
        }
      },
      // A continue-as-new drops the waiters; their routes answer with the row as it then is.
      unfinishedPolicy: HandlerUnfinishedPolicy.ABANDON,
    },
  );

  for (;;) {
    while (queue.length > 0) {
      const command = queue.shift()!;
      running = command;
      await run(input.workspaceId, command);
      running = null;
      done += 1;
      if (command.id) finished.push(command.id);
      if (workflowInfo().continueAsNewSuggested && queue.length > 0) {
        await continueAsNew<typeof workspaceWorkflow>({ workspaceId: input.workspaceId, queue });
      }
    }
    // The waiters of the last command get their answer before the run ends (a command that
    // arrives meanwhile is run, not dropped).
    await condition(allHandlersFinished);
    if (queue.length === 0) return;
  }
}
