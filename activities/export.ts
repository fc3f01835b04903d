import type { Services } from '../services/core/context.ts';
import type { BatchArgs, ExportMode, ExportRef, RunOutcome } from '../workflows/contracts/static-export.ts';
import { abortRun, beginRun, finishRun, renderBatch } from '../services/export/runner.ts';

/** The static export's side effects, one call per workflow step (services/export/runner.ts). Each is idempotent. */
export function createExportActivities(services: Services) {
  return {
    async beginExportRun(ref: ExportRef, runId: string, mode: ExportMode) {
      return beginRun(services, ref, runId, mode);
    },
    async renderExportBatch(ref: ExportRef, args: BatchArgs) {
      return renderBatch(services, ref, args);
    },
    async finishExportRun(ref: ExportRef, run: RunOutcome) {
      return finishRun(services, ref, run);
    },
    async abortExportRun(ref: ExportRef, run: RunOutcome, end: { status: 'cancelled' | 'failed'; error: string | null }) {
      return abortRun(services, ref, run, end);
    },
  };
}

export type ExportActivities = ReturnType<typeof createExportActivities>;
