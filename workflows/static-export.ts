import { ActivityFailure, continueAsNew, proxyActivities, setHandler, sleep, uuid4, workflowInfo } from '@temporalio/workflow';
import type { ExportActivities } from '../activities/export.ts';
import type { ExportRef } from '../services/export/model.ts';
import type { BatchResult } from '../services/export/runner.ts';
import {
  exportProgressQuery,
  requestExportSignal,
  type ExportProgress,
  type ExportRequest,
  type ExportWorkflowInput,
  type QueuedRun,
} from './contracts/static-export.ts';

export type { ExportProgress, ExportRequest, ExportWorkflowInput };

const { beginExportRun, renderExportBatch, finishExportRun, failExportRun } = proxyActivities<ExportActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
});

/**
 * Queues a request. A full run covers everything an incremental one would do, so a waiting run is
 * upgraded to full rather than a second run being added; at most one run waits behind the current one.
 */
function enqueue(queue: QueuedRun[], request: ExportRequest): void {
  const waiting = queue[0];
  if (!waiting) {
    queue.push({ mode: request.mode, requestIds: [request.requestId] });
    return;
  }
  if (request.mode === 'full') waiting.mode = 'full';
  waiting.requestIds.push(request.requestId);
}

/**
 * The export actor of one site (id and messages: ./contracts/static-export.ts). Run requests arrive as signals
 * (signal-with-start), runs happen one after another, progress is readable by query. It ends when
 * nothing is queued; the next request starts it again.
 */
export async function staticExportWorkflow(input: ExportWorkflowInput): Promise<void> {
  const queue: QueuedRun[] = [...(input.queue ?? [])];
  let progress: ExportProgress['running'] = null;
  setHandler(requestExportSignal, (request) => enqueue(queue, request));
  setHandler(exportProgressQuery, () => ({ running: progress, queued: queue.map((q) => q.mode) }));
  const ref: ExportRef = { workspaceId: input.workspaceId, siteId: input.siteId };

  while (queue.length > 0) {
    const next = queue.shift()!;
    const runId = uuid4();
    progress = { runId, mode: next.mode, phase: 'planning', total: 0, done: 0, rendered: 0, removed: 0, startedAt: null, requestIds: next.requestIds };
    try {
      const plan = await beginExportRun(ref, runId, next.mode);
      Object.assign(progress, { mode: plan.mode, total: plan.total, startedAt: plan.startedAt, phase: 'rendering' });
      let afterId: string | null = null;
      for (;;) {
        const batch: BatchResult = await renderExportBatch(ref, { runId, since: plan.since, afterId, limit: input.batchSize });
        progress.done += batch.processed;
        progress.rendered += batch.rendered;
        progress.removed += batch.removed;
        afterId = batch.lastId;
        if (batch.done) break;
        if (input.batchPauseMs > 0) await sleep(input.batchPauseMs);
      }
      progress.phase = 'finishing';
      await finishExportRun(ref, { runId, mode: plan.mode, requestIds: next.requestIds, startedAt: plan.startedAt, rendered: progress.rendered, removed: progress.removed });
    } catch (error) {
      const message = error instanceof ActivityFailure ? (error.cause?.message ?? error.message) : error instanceof Error ? error.message : String(error);
      await failExportRun(ref, { runId, mode: progress.mode, requestIds: next.requestIds, startedAt: progress.startedAt, error: message });
    }
    progress = null;
    if (workflowInfo().continueAsNewSuggested && queue.length > 0) {
      await continueAsNew<typeof staticExportWorkflow>({ ...input, queue });
    }
  }
}
