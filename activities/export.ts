import type { Services } from '../services/core/context.ts';
import type { ExportMode, ExportRef } from '../services/export/model.ts';
import { beginRun, failRun, finishRun, renderBatch } from '../services/export/runner.ts';

/** The static export's side effects, one call per workflow step (services/export/runner.ts). */
export function createExportActivities(services: Services) {
  return {
    async beginExportRun(ref: ExportRef, runId: string, mode: ExportMode) {
      return beginRun(services, ref, runId, mode);
    },
    async renderExportBatch(ref: ExportRef, args: { runId: string; since: string | null; afterId: string | null; limit: number }) {
      return renderBatch(services, ref, args);
    },
    async finishExportRun(ref: ExportRef, run: { runId: string; mode: ExportMode; requestIds: string[]; startedAt: string; rendered: number; removed: number }) {
      return finishRun(services, ref, run);
    },
    async failExportRun(ref: ExportRef, run: { runId: string; mode: ExportMode; requestIds: string[]; startedAt: string | null; error: string }) {
      return failRun(services, ref, run);
    },
  };
}

export type ExportActivities = ReturnType<typeof createExportActivities>;
