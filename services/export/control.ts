import { WorkflowNotFoundError } from '@temporalio/client';
import type { OperationContext, Services } from '../core/context.ts';
import { newId } from '../core/ids.ts';
import type { staticExportWorkflow } from '../../workflows/static-export.ts';
import type { ExportMode, ExportRef } from './model.ts';
import {
  exportProgressQuery,
  requestExportSignal,
  staticExportWorkflowId,
  staticExportWorkflowType,
  type ExportProgress,
  type ExportRequest,
  type ExportWorkflowInput,
} from '../../workflows/contracts/static-export.ts';

export interface ExportTuning {
  batchSize: number;
  batchPauseMs: number;
}

const tunings = new WeakMap<Services, ExportTuning>();

/** Batch size and pause travel with each run's workflow start; tests use small batches to watch progress. */
export function configureStaticExport(services: Services, tuning: Partial<ExportTuning>): void {
  tunings.set(services, { ...exportTuning(services), ...tuning });
}

const exportTuning = (services: Services): ExportTuning => tunings.get(services) ?? { batchSize: 50, batchPauseMs: 0 };

const refOf = (ctx: OperationContext): ExportRef => ({ workspaceId: ctx.workspace._id, siteId: ctx.site._id });

/** Asks the site's export actor for a run, starting it if it is not running (signal-with-start). */
export async function requestExportRun(ctx: OperationContext, mode: ExportMode): Promise<string> {
  const { client, taskQueue } = ctx.services.temporal;
  const ref = refOf(ctx);
  const request: ExportRequest = { requestId: newId(), mode };
  const input: ExportWorkflowInput = { ...ref, ...exportTuning(ctx.services) };
  await client.workflow.signalWithStart<typeof staticExportWorkflow, [ExportRequest]>(staticExportWorkflowType, {
    taskQueue,
    workflowId: staticExportWorkflowId(ref),
    args: [input],
    signal: requestExportSignal,
    signalArgs: [request],
  });
  return request.requestId;
}

/**
 * The actor's state: `running` (the workflow exists and is open) and its live progress. The query
 * needs a worker; when none answers within a few seconds the progress is null but `running` holds.
 */
export async function exportProgress(ctx: OperationContext): Promise<{ running: boolean; progress: ExportProgress | null }> {
  const { client } = ctx.services.temporal;
  const handle = client.workflow.getHandle<typeof staticExportWorkflow>(staticExportWorkflowId(refOf(ctx)));
  try {
    const description = await handle.describe();
    if (description.status.name !== 'RUNNING') return { running: false, progress: null };
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return { running: false, progress: null };
    throw error;
  }
  try {
    return { running: true, progress: await client.withDeadline(Date.now() + QUERY_DEADLINE_MS, () => handle.query(exportProgressQuery)) };
  } catch (error) {
    ctx.services.log.warn({ err: error instanceof Error ? error.message : String(error) }, 'export progress query unanswered');
    return { running: true, progress: null };
  }
}

const QUERY_DEADLINE_MS = 5000;
