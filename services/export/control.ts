import { WorkflowNotFoundError } from '@temporalio/client';
import type { OperationContext } from '../core/context.ts';
import { newId } from '../core/ids.ts';
import type { staticExportWorkflow } from '../../workflows/static-export.ts';
import {
  cancelExportSignal,
  exportProgressQuery,
  requestExportSignal,
  staticExportWorkflowId,
  staticExportWorkflowType,
  type ExportMode,
  type ExportProgress,
  type ExportRef,
  type ExportRequest,
  type ExportWorkflowInput,
} from '../../workflows/contracts/static-export.ts';

const refOf = (ctx: OperationContext): ExportRef => ({ workspaceId: ctx.workspace._id, siteId: ctx.site._id });

/** Asks the site's export actor for a run, starting it if it is not running (signal-with-start). */
export async function requestExportRun(ctx: OperationContext, mode: ExportMode): Promise<string> {
  const { client, taskQueue } = ctx.services.temporal;
  const ref = refOf(ctx);
  const request: ExportRequest = { requestId: newId(), mode };
  // Batch size and pause travel with each run's workflow start (Services.exportTuning).
  const input: ExportWorkflowInput = { ...ref, ...ctx.services.exportTuning };
  await client.workflow.signalWithStart<typeof staticExportWorkflow, [ExportRequest]>(staticExportWorkflowType, {
    taskQueue,
    workflowId: staticExportWorkflowId(ref),
    args: [input],
    signal: requestExportSignal,
    signalArgs: [request],
  });
  return request.requestId;
}

async function openActor(ctx: OperationContext) {
  const handle = ctx.services.temporal.client.workflow.getHandle<typeof staticExportWorkflow>(staticExportWorkflowId(refOf(ctx)));
  try {
    const description = await handle.describe();
    return description.status.name === 'RUNNING' ? handle : null;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return null;
    throw error;
  }
}

/** Signals the actor to stop its run (and drop the waiting one with `queued`). False when no actor is open. */
export async function cancelExportRun(ctx: OperationContext, queued: boolean): Promise<boolean> {
  const handle = await openActor(ctx);
  if (!handle) return false;
  try {
    await handle.signal(cancelExportSignal, { queued });
    return true;
  } catch (error) {
    // Ended between describe and signal: nothing left to cancel.
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

/**
 * The actor's state: `running` (the workflow exists and is open) and its live progress. The query
 * needs a worker; when none answers within a few seconds the progress is null but `running` holds.
 */
export async function exportProgress(ctx: OperationContext): Promise<{ running: boolean; progress: ExportProgress | null }> {
  const handle = await openActor(ctx);
  if (!handle) return { running: false, progress: null };
  try {
    return {
      running: true,
      progress: await ctx.services.temporal.bounded(Date.now() + QUERY_DEADLINE_MS, () => handle.query(exportProgressQuery)),
    };
  } catch (error) {
    ctx.services.log.warn({ err: error instanceof Error ? error.message : String(error) }, 'export progress query unanswered');
    return { running: true, progress: null };
  }
}

const QUERY_DEADLINE_MS = 5000;
