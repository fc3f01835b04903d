import type { Binary, Db } from 'mongodb';
import type { ExportMode } from '../../workflows/contracts/static-export.ts';

export { EXPORT_MODES, type ExportMode, type ExportRef } from '../../workflows/contracts/static-export.ts';

/** Entries rendered per activity call, and the pause between calls (0 = none). */
export interface ExportTuning {
  batchSize: number;
  batchPauseMs: number;
}
export const DEFAULT_EXPORT_TUNING: ExportTuning = { batchSize: 200, batchPauseMs: 0 };

/**
 * The export output lives in the GridFS bucket `export` of the workspace database: every gateway
 * and worker reaches it (a DATA_DIR folder would exist on one machine only), it is dropped with
 * the workspace. A run writes `staged` versions; only its finish makes them `live` (files.ts).
 */
export const EXPORT_BUCKET = 'export';
export const exportFiles = (db: Db) => db.collection<ExportFileDoc>(`${EXPORT_BUCKET}.files`);

export interface ExportFileMeta {
  siteId: string;
  path: string;
  contentType: string;
  /** The entry a page belongs to; null for site pages (home, lists, feeds, sitemap, redirects). */
  entryId: string | null;
  runId: string;
  generation: number;
  /** `staged`: written by a run still going (never served); `live`: part of the served output. */
  state: 'staged' | 'live';
  /** sha256 of the bytes (base64url): an unchanged page is not rewritten; the preview's strong ETag. */
  sha: string;
}

/** GridFS files document of one exported file (GridFS keeps the site in `metadata`). */
export interface ExportFileDoc {
  _id: string;
  length: number;
  chunkSize: number;
  /** The body is `data` itself (files up to one chunk), no chunk documents (files.ts). */
  inline?: true;
  data?: Binary;
  filename: string;
  uploadDate: Date;
  metadata: ExportFileMeta;
}

export type RunStatus = 'succeeded' | 'failed' | 'cancelled';

export interface RunSummary {
  runId: string;
  mode: ExportMode;
  status: RunStatus;
  /** The run requests this run served (requests made while a run waited are merged). */
  requestIds: string[];
  startedAt: Date;
  finishedAt: Date;
  /** Entries rendered, and pages (entry and site pages) whose bytes changed. */
  rendered: number;
  written: number;
  removed: number;
  error: string | null;
}

/** What the output was rendered from; a change of `themeId` forces a full run, of `designHash` a re-render of every page. */
export interface RenderBasis {
  themeId: string;
  designHash: string;
}

/** One row per site (`_id` = site id): what the last runs did and where incremental starts. */
export interface ExportStateDoc {
  _id: string;
  siteId: string;
  status: 'idle' | 'running';
  current: { runId: string; mode: ExportMode; startedAt: Date; generation: number; since: Date | null; basis: RenderBasis } | null;
  /** Last generation handed out: file versions sort by it. */
  generation: number;
  lastRun: RunSummary | null;
  /** Start of the last successful run: an incremental run renders entries changed since then. */
  lastSuccessStartedAt: Date | null;
  /** What the served output was rendered from. */
  basis: RenderBasis | null;
  output: { files: number; bytes: number };
  /** Changes whenever the served output does (a finished run, a clear): the archive's ETag. */
  outputVersion: string | null;
  updatedAt: Date;
}

export const exportStates = (db: Db) => db.collection<ExportStateDoc>('export_state');

/** Run history, newest first by `_id` (`<siteId>:<finishedAt ms padded>:<runId>`); one row per run, written once. */
export interface ExportRunDoc extends RunSummary {
  _id: string;
  siteId: string;
}
export const exportRuns = (db: Db) => db.collection<ExportRunDoc>('export_runs');

/**
 * Per run and entry it looked at: the paths the entry keeps once the run finishes (empty when it
 * was withdrawn). Written during the run, applied by its commit, so withdrawals wait for the finish too.
 */
export interface ExportEntryChangeDoc {
  _id: string;
  siteId: string;
  runId: string;
  entryId: string;
  keep: string[];
}
export const exportEntryChanges = (db: Db) => db.collection<ExportEntryChangeDoc>('export_entry_changes');

export async function readExportState(db: Db, siteId: string): Promise<ExportStateDoc | null> {
  return exportStates(db).findOne({ _id: siteId, siteId });
}
