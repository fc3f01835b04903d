import type { Services } from '../core/context.ts';
import { workspaceCommandSignal, workspaceWorkflowId, workspaceWorkflowType, type WorkspaceCommand } from '../../workflows/contracts/workspace.ts';
import type { Workspace } from '../core/tenants.ts';
import { platformCollections } from '../tenancy/platform-db.ts';
import { publishWorkspaceChange } from './lifecycle.ts';

const withTimeout = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms).unref())]);

/**
 * Hands a command to the workspace's actor, starting it if it is not running (signal-with-start).
 * The caller has already written what it wants into the workspace row; if Temporal is away the
 * command is lost here but not the intent: the worker's reconciler re-sends it from the row.
 * Returns whether the command reached Temporal.
 */
export async function sendWorkspaceCommand(services: Services, workspaceId: string, command: WorkspaceCommand): Promise<boolean> {
  try {
    await withTimeout(
      services.temporal.client.workflow.signalWithStart(workspaceWorkflowType, {
        taskQueue: services.temporal.taskQueue,
        workflowId: workspaceWorkflowId(workspaceId),
        args: [{ workspaceId }],
        signal: workspaceCommandSignal,
        signalArgs: [command],
      }),
      5000,
    );
    return true;
  } catch (error) {
    services.log.warn({ workspaceId, command: command.kind, err: error }, 'workspace command not delivered; the reconciler will resend it');
    return false;
  }
}

/**
 * Waits (bounded, `LIFECYCLE_WAIT_MS`) until the workspace row satisfies `done`, and returns the
 * row as it then is: the routes answer with whatever state the step reached, never hanging.
 */
export async function awaitWorkspace(services: Services, workspaceId: string, done: (workspace: Workspace) => boolean): Promise<Workspace | null> {
  const { workspaces } = platformCollections(services);
  const deadline = Date.now() + services.config.LIFECYCLE_WAIT_MS;
  let delay = 20;
  for (;;) {
    const row = await workspaces.findOne({ _id: workspaceId });
    if (!row || done(row) || Date.now() >= deadline) {
      // The step's activity publishes its change too, but only after the row this poll saw was
      // written: publishing here (acknowledged by every live gateway) makes the answer's state the
      // one every gateway serves from the next request.
      if (row) await publishWorkspaceChange(services, workspaceId);
      return row;
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 200);
  }
}
