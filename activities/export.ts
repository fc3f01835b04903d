import type { Services } from '../services/core/context.ts';
import type { BatchArgs, ExportMode, ExportRef, RunOutcome } from '../workflows/contracts/static-export.ts';
import { abortRun, beginRun, finishRun, renderBatch } from '../services/export/runner.ts';

/** The static export's side effects, one call per workflow step (services/export/runner.ts). Each is idempotent. */
export function createExportActivities(services: Services) {
  const { exportRuns, exportPages } = services.metrics;
  return {
    async beginExportRun(ref: ExportRef, runId: string, mode: ExportMode) {
      const plan = await beginRun(services, ref, runId, mode);
      exportRuns.inc({ mode: plan.mode, outcome: 'started' });
      return plan;
    },
    async renderExportBatch(ref: ExportRef, args: BatchArgs) {
      const result = await renderBatch(services, ref, args);
      exportPages.inc({}, result.rendered);
      return result;
    },
    async finishExportRun(ref: ExportRef, run: RunOutcome) {
      await finishRun(services, ref, run);
      exportRuns.inc({ mode: run.mode, outcome: 'succeeded' });
    },
    async abortExportRun(ref: ExportRef, run: RunOutcome, end: { status: 'cancelled' | 'failed'; error: string | null }) {
      await abortRun(services, ref, run, end);
      exportRuns.inc({ mode: run.mode, outcome: end.status });
    },
  };
}

export type ExportActivities = ReturnType<typeof createExportActivities>;
