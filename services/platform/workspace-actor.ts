import type { Services } from '../core/context.ts';
import { newId } from '../core/ids.ts';
import {
  workspaceCommandDoneUpdate,
  workspaceCommandSignal,
  workspaceWorkflowId,
  workspaceWorkflowType,
  type WorkspaceCommand,
} from '../../workflows/contracts/workspace.ts';
import type { Workspace } from '../core/tenants.ts';
import { platformCollections } from '../tenancy/platform-db.ts';
import { publishWorkspaceChange } from './lifecycle.ts';

const withTimeout = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms).unref())]);

/**
 * Hands a command to the workspace's actor, starting it if it is not running (signal-with-start:
 * durable as soon as this returns, even with no worker up). The caller has already written what it
 * wants into the workspace row; if Temporal is away the command is lost here but not the intent:
 * the worker's reconciler re-sends it from the row. Returns the command's id (to wait for it with
 * `awaitWorkspaceCommand`), or null when it did not reach Temporal.
 */
export async function sendWorkspaceCommand(services: Services, workspaceId: string, command: WorkspaceCommand): Promise<string | null> {
  const id = newId();
  try {
    await withTimeout(
      services.temporal.client.workflow.signalWithStart(workspaceWorkflowType, {
        taskQueue: services.temporal.taskQueue,
        workflowId: workspaceWorkflowId(workspaceId),
        args: [{ workspaceId }],
        signal: workspaceCommandSignal,
        signalArgs: [{ ...command, id }],
      }),
      5000,
    );
    return id;
  } catch (error) {
    services.log.warn({ workspaceId, command: command.kind, err: error }, 'workspace command not delivered; the reconciler will resend it');
    return null;
  }
}

/**
 * Whether the actor ran the command within `LIFECYCLE_WAIT_MS`: a Temporal Update that completes
 * when it has, abandoned at the deadline. Anything else is a no (a rejection: the run that took the
 * command has ended; Temporal away): the caller reads the row either way.
 */
async function commandRan(services: Services, workspaceId: string, commandId: string): Promise<boolean> {
  const { client, bounded } = services.temporal;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), services.config.LIFECYCLE_WAIT_MS);
  try {
    await bounded(deadline.signal, () =>
      client.workflow.getHandle(workspaceWorkflowId(workspaceId)).executeUpdate(workspaceCommandDoneUpdate, { args: [commandId] }),
    );
    return true;
  } catch (error) {
    if (!deadline.signal.aborted) services.log.debug({ workspaceId, err: error }, 'workspace command not awaited; answering with the row');
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Waits on the actor itself (bounded, `LIFECYCLE_WAIT_MS`) until it ran the command, then reads the
 * workspace row once: the routes answer with the end state when the step finished in time, else
 * with the state so far, never hanging and never polling the database.
 */
export async function awaitWorkspaceCommand(services: Services, workspaceId: string, commandId: string | null): Promise<Workspace | null> {
  const ran = commandId !== null && (await commandRan(services, workspaceId, commandId));
  const row = await platformCollections(services).workspaces.findOne({ _id: workspaceId });
  // A step that ran published its change with every live gateway's acknowledgement. Otherwise the
  // row may hold a change whose activity has not published yet: publishing here makes the answer's
  // state the one every gateway serves from the next request.
  if (row && !ran) await publishWorkspaceChange(services, workspaceId);
  return row;
}
