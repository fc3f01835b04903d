import { ActivityFailure, continueAsNew, proxyActivities, setHandler, sleep, uuid4, workflowInfo } from '@temporalio/workflow';
import type { ExportActivities } from '../activities/export.ts';
import {
  cancelExportSignal,
  exportProgressQuery,
  requestExportSignal,
  type BatchResult,
  type ExportRef,
  type ExportRequest,
  type ExportWorkflowInput,
  type QueuedRun,
  type RunningExport,
} from './contracts/static-export.ts';

const { beginExportRun, renderExportBatch, finishExportRun, abortExportRun } = proxyActivities<ExportActivities>({
  startToCloseTimeout: '2 minutes',
  // A worker killed mid-batch is noticed within the heartbeat-free timeout; batches are small.
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

const messageOf = (error: unknown) =>
  error instanceof ActivityFailure ? (error.cause?.message ?? error.message) : error instanceof Error ? error.message : String(error);

/**
 * The export actor of one site (id and messages: ./contracts/static-export.ts). Run requests arrive
 * as signals (signal-with-start), runs happen one after another, progress is readable by query, a cancel
 * signal stops the current run between batches. A run writes staged files that become the served
 * output only when it finishes, so a cancelled or failed run leaves the last good export in place.
 * It ends when nothing is queued; the next request starts it again.
 */
export async function staticExportWorkflow(input: ExportWorkflowInput): Promise<void> {
  const queue: QueuedRun[] = [...(input.queue ?? [])];
  let progress: RunningExport | null = null;
  let cancelRequested = false;
  setHandler(requestExportSignal, (request) => enqueue(queue, request));
  setHandler(cancelExportSignal, ({ queued }) => {
    if (progress) cancelRequested = true;
    if (queued) queue.length = 0;
  });
  setHandler(exportProgressQuery, () => ({ running: progress, queued: queue.map((q) => q.mode) }));
  const ref: ExportRef = { workspaceId: input.workspaceId, siteId: input.siteId };

  while (queue.length > 0) {
    const next = queue.shift()!;
    const runId = uuid4();
    cancelRequested = false;
    const running: RunningExport = {
      runId,
      mode: next.mode,
      phase: 'planning',
      total: 0,
      done: 0,
      rendered: 0,
      written: 0,
      removed: 0,
      startedAt: null,
      requestIds: next.requestIds,
    };
    progress = running;
    let generation = 0;
    const outcome = () => ({
      runId,
      mode: running.mode,
      generation,
      requestIds: next.requestIds,
      startedAt: running.startedAt,
      rendered: running.rendered,
      written: running.written,
      removed: running.removed,
    });
    try {
      const plan = await beginExportRun(ref, runId, next.mode);
      generation = plan.generation;
      Object.assign(running, { mode: plan.mode, total: plan.total, startedAt: plan.startedAt, phase: 'rendering' });
      let afterId: string | null = null;
      while (!cancelRequested) {
        const batch: BatchResult = await renderExportBatch(ref, { runId, generation, mode: plan.mode, since: plan.since, afterId, limit: input.batchSize });
        running.done += batch.processed;
        running.rendered += batch.rendered;
        running.written += batch.written;
        running.removed += batch.removed;
        afterId = batch.lastId;
        if (batch.done) break;
        if (input.batchPauseMs > 0) await sleep(input.batchPauseMs);
      }
      if (cancelRequested) {
        running.phase = 'cancelling';
        await abortExportRun(ref, outcome(), { status: 'cancelled', error: null });
      } else {
        running.phase = 'finishing';
        await finishExportRun(ref, outcome());
      }
    } catch (error) {
      await abortExportRun(ref, outcome(), { status: 'failed', error: messageOf(error) });
    }
    progress = null;
    if (workflowInfo().continueAsNewSuggested && queue.length > 0) {
      await continueAsNew<typeof staticExportWorkflow>({ ...input, queue });
    }
  }
}
