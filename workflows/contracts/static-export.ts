import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { ExportMode, ExportRef } from '../../services/export/model.ts';

// The contract of the static-export actor: everything the workflow, its activities and its callers
// share. Pure: only @temporalio/workflow (signal/query definitions) and types, so the gateway can
// import it without loading workflow code, and the bundle gets no copied constants.

/** The workflow type; equals the function's name exported from workflows/index.ts. */
export const staticExportWorkflowType = 'staticExportWorkflow';

/** One actor per site. */
export const staticExportWorkflowId = (ref: ExportRef) => `export:${ref.workspaceId}:${ref.siteId}`;

export interface ExportRequest {
  requestId: string;
  mode: ExportMode;
}

/** A waiting run; requests that arrive while it waits are merged into it. */
export interface QueuedRun {
  mode: ExportMode;
  requestIds: string[];
}

export interface ExportWorkflowInput extends ExportRef {
  /** Entries rendered per activity call (and per progress step). */
  batchSize: number;
  /** Pause between batches, to spare the database on large sites (0 = none). */
  batchPauseMs: number;
  /** Carried over by continue-as-new. */
  queue?: QueuedRun[];
}

export interface ExportProgress {
  running: {
    runId: string;
    mode: ExportMode;
    phase: 'planning' | 'rendering' | 'finishing';
    total: number;
    done: number;
    rendered: number;
    removed: number;
    startedAt: string | null;
    requestIds: string[];
  } | null;
  queued: ExportMode[];
}

/** Asks for a run (callers use signal-with-start). */
export const requestExportSignal = defineSignal<[ExportRequest]>('requestExport');
/** The run in progress and what waits behind it. */
export const exportProgressQuery = defineQuery<ExportProgress>('exportProgress');
