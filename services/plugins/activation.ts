import { TimeoutFailure, WorkflowExecutionAlreadyStartedError, WorkflowFailedError } from '@temporalio/client';
import type { OperationContext } from '../core/context.ts';
import { AppError, BadGatewayError, ConflictError, ServiceUnavailableError } from '../core/errors.ts';
import type { pluginActivationWorkflow } from '../../workflows/plugin-activation.ts';
import {
  pluginActivationWorkflowId,
  pluginActivationWorkflowType,
  type PluginActivationOutcome,
  type PluginRoutineInput,
  type PluginRoutineResult,
} from '../../workflows/contracts/plugin-activation.ts';

export { pluginActivationWorkflowId };

/**
 * Starts the activation workflow and waits for its outcome. Only one activation or deactivation of
 * a plugin on a site runs at a time: a second request while one runs is a 409 (the workflow id is
 * the business key; a finished one may be started again). A routine that throws is a 502.
 */
export async function runPluginActivation(ctx: OperationContext, pluginId: string, action: PluginRoutineInput['action']): Promise<PluginRoutineResult> {
  const { client, taskQueue } = ctx.services.temporal;
  const input: PluginRoutineInput = { workspaceId: ctx.workspace._id, siteId: ctx.site._id, pluginId, action };
  let outcome: PluginActivationOutcome;
  try {
    const handle = await client.workflow.start<typeof pluginActivationWorkflow>(pluginActivationWorkflowType, {
      taskQueue,
      workflowId: pluginActivationWorkflowId(ctx.workspace._id, ctx.site._id, pluginId),
      workflowIdConflictPolicy: 'FAIL',
      // Bounds the caller's wait when no worker picks the job up (answered 503 below).
      workflowExecutionTimeout: '5 minutes',
      args: [input],
    });
    outcome = await handle.result();
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) throw new ConflictError(`Plugin ${pluginId} is already being activated or deactivated`);
    if (error instanceof WorkflowFailedError && error.cause instanceof TimeoutFailure) {
      throw new ServiceUnavailableError(`Plugin ${action} did not finish in time; check GET /plugins`);
    }
    if (error instanceof WorkflowFailedError) {
      ctx.services.log.error({ pluginId, action, err: error.cause?.message ?? error.message }, 'plugin activation workflow failed');
      throw new BadGatewayError(`Plugin ${action} failed`);
    }
    if (error instanceof AppError) throw error;
    // Temporal unreachable or too slow to answer: the run may still finish (GET /plugins tells).
    ctx.services.log.error({ pluginId, action, err: error instanceof Error ? error.message : String(error) }, 'plugin activation workflow unreachable');
    throw new ServiceUnavailableError(`Plugin ${action} could not be confirmed; check GET /plugins`);
  } finally {
    // The worker may be another process: this gateway's copy of the active set is stale now.
    ctx.services.activePlugins.forget(ctx.site._id);
  }
  if (!outcome.ok) throw new BadGatewayError(`Plugin activation failed: ${outcome.error}`);
  return { changed: outcome.changed, installed: outcome.installed };
}
