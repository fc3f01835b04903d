import { HandlerUnfinishedPolicy } from '@temporalio/common';
import { allHandlersFinished, condition, continueAsNew, executeChild, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { WorkspaceActivities } from '../activities/workspace.ts';
import { backupWorkflow } from './backup.ts';
import { backupWorkflowId } from './contracts/backup.ts';
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

/**
 * A deleted workspace's purge, when due: its final backup first when one was asked (the backup
 * workflow, as a child), then the drop. Answers the timer's next deadline, or null for none.
 */
async function purge(workspaceId: string): Promise<number | null> {
  const step = await acts.prepareWorkspacePurge(workspaceId);
  if (step.kind === 'wait') return step.purgeAt;
  if (step.kind === 'none') return null;
  if (step.finalBackupId) {
    const ref = { workspaceId, backupId: step.finalBackupId };
    await executeChild(backupWorkflow, { workflowId: backupWorkflowId(workspaceId, step.finalBackupId), args: [ref] });
  }
  await acts.purgeWorkspace(workspaceId);
  return null;
}

/** Runs one command; answers the purge timer's new deadline (null: none), or undefined to leave it as it is. */
async function run(workspaceId: string, command: WorkspaceCommand): Promise<number | null | undefined> {
  switch (command.kind) {
    case 'provision':
      await runProvisionSteps(acts, workspaceId);
      return undefined;
    case 'suspend':
      await acts.suspendWorkspace(workspaceId);
      return undefined;
    case 'reactivate':
      await acts.reactivateWorkspace(workspaceId);
      return undefined;
    case 'delete': {
      await acts.beginWorkspaceDeletion(workspaceId, command.dropDatabase);
      await acts.cancelWorkspaceWork(workspaceId);
      await acts.releaseWorkspaceDomainClaims(workspaceId);
      const purgeAt = await acts.finishWorkspaceDeletion(workspaceId);
      // Runs of the releases before grace periods recorded no answer here (they dropped the
      // database in this step): nothing more, so their histories replay.
      if (purgeAt === undefined) return undefined;
      // An operator who confirmed the purge (`dropDatabase`) gets it within this command.
      if (purgeAt !== null && purgeAt <= Date.now()) return purge(workspaceId);
      return purgeAt;
    }
    case 'undelete':
      await acts.undeleteWorkspace(workspaceId);
      await acts.resumeWorkspaceWork(workspaceId);
      return null;
    case 'purge':
      return purge(workspaceId);
    case 'indexes':
      await acts.upgradeWorkspaceIndexes(workspaceId);
      return undefined;
  }
}

/**
 * The actor of one workspace (`workspace:<id>`): every lifecycle step of that workspace runs here,
 * one after another, so a suspension never races a deletion, nor an undelete the purge. Commands
 * arrive as signals (signal-with-start, durable even with no worker up); their senders wait for them
 * with the `workspaceCommandDone` update. The actor ends when nothing is queued and no purge is
 * pending: a deleted workspace's actor waits on its own durable timer until the purge is due (a
 * command wakes it sooner), and the next command starts it again.
 */
export async function workspaceWorkflow(input: WorkspaceWorkflowInput): Promise<void> {
  const queue: WorkspaceCommand[] = [...(input.queue ?? [])];
  let running: WorkspaceCommand | null = null;
  let done = 0;
  let purgeAt: number | null = input.purgeAt ?? null;
  const finished: string[] = [];
  setHandler(workspaceCommandSignal, (command) => {
    queue.push(command);
  });
  setHandler(workspaceStateQuery, () => ({ running: running?.kind ?? null, queued: queue.map((c) => c.kind), done, purgeAt }));
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
      const deadline = await run(input.workspaceId, command);
      if (deadline !== undefined) purgeAt = deadline;
      running = null;
      done += 1;
      if (command.id) finished.push(command.id);
      if (workflowInfo().continueAsNewSuggested && queue.length > 0) {
        await continueAsNew<typeof workspaceWorkflow>({ workspaceId: input.workspaceId, queue, purgeAt });
      }
    }
    // The waiters of the last command get their answer before the run ends (a command that
    // arrives meanwhile is run, not dropped).
    await condition(allHandlersFinished);
    if (queue.length > 0) continue;
    if (purgeAt === null) return;
    // The purge timer (durable: a worker killed meanwhile changes nothing); the purge step reads
    // the row again, so a timer that fires early or after an undelete does no harm.
    if (!(await condition(() => queue.length > 0, Math.max(purgeAt - Date.now(), 1)))) queue.push({ kind: 'purge' });
  }
}
