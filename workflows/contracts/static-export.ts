import { defineQuery, defineSignal } from '@temporalio/workflow';

// The contract of the static-export actor: everything the workflow, its activities and its callers
// share. Pure: only @temporalio/workflow (signal/query definitions) and types, so the gateway can
// import it without loading workflow code, and the bundle gets no copied constants.

export const EXPORT_MODES = ['full', 'incremental'] as const;
export type ExportMode = (typeof EXPORT_MODES)[number];

/** The workflow type; equals the function's name exported from workflows/index.ts. */
export const staticExportWorkflowType = 'staticExportWorkflow';

/** Identifies a site for the workflow and its activities (ids only: the workflow carries no handles). */
export interface ExportRef {
  workspaceId: string;
  siteId: string;
}

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

export type ExportPhase = 'planning' | 'rendering' | 'finishing' | 'cancelling';

export interface RunningExport {
  runId: string;
  mode: ExportMode;
  phase: ExportPhase;
  total: number;
  done: number;
  /** Entries rendered, files whose bytes changed, entries withdrawn. */
  rendered: number;
  written: number;
  removed: number;
  startedAt: string | null;
  requestIds: string[];
}

export interface ExportProgress {
  running: RunningExport | null;
  queued: ExportMode[];
}

/** What the plan activity answers. */
export interface RunPlan {
  /** `incremental` without an earlier successful run, or after a theme switch, is done as `full`. */
  mode: ExportMode;
  /** Incremental: entries changed since this instant; null = every published entry. */
  since: string | null;
  total: number;
  startedAt: string;
  /** Output generation of this run (orders file versions). */
  generation: number;
}

export interface BatchArgs {
  runId: string;
  generation: number;
  mode: ExportMode;
  since: string | null;
  afterId: string | null;
  limit: number;
}

export interface BatchResult {
  processed: number;
  rendered: number;
  written: number;
  removed: number;
  lastId: string | null;
  done: boolean;
}

export interface RunOutcome {
  runId: string;
  mode: ExportMode;
  generation: number;
  requestIds: string[];
  startedAt: string | null;
  rendered: number;
  written: number;
  removed: number;
}

/** Asks for a run (callers use signal-with-start). */
export const requestExportSignal = defineSignal<[ExportRequest]>('requestExport');
/** Stops the run in progress (its staged files are dropped; the last good export stays) and, with `queued`, the waiting one. */
export const cancelExportSignal = defineSignal<[{ queued: boolean }]>('cancelExport');
/** The run in progress and what waits behind it. */
export const exportProgressQuery = defineQuery<ExportProgress>('exportProgress');
