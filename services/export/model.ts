import type { Binary, Db } from 'mongodb';
import type { ExportMode } from '../../workflows/contracts/static-export.ts';
import { siteStateCollection, siteStateId } from '../core/site-state.ts';

export { EXPORT_MODES, type ExportMode, type ExportRef } from '../../workflows/contracts/static-export.ts';

/** Entries rendered per activity call, and the pause between calls (0 = none). */
export interface ExportTuning {
  batchSize: number;
  batchPauseMs: number;
}
export const DEFAULT_EXPORT_TUNING: ExportTuning = { batchSize: 200, batchPauseMs: 0 };

/**
 * Where the output lives (files.ts, docs/plugins.md "Storage layout"): collections of the workspace
 * database, so every gateway and worker reaches it (a DATA_DIR folder exists on one machine only)
 * and it is dropped with the workspace. Every document id starts `<siteId>:<generation>:`, so a
 * site's output, a run's writes and everything older than a generation are `_id` ranges: the local
 * engine (mongo-java-server) uses only `_id` and unique indexes, any other filter scans.
 */
export const EXPORT_STORAGE = 'export_packs';

/**
 * Lists inside export documents are stored as one JSON string: the local engine converts every
 * field of a nested document on each write and read (a 4,000-entry manifest as an array of
 * objects took over a second to write), a string is one field. `Json<T>` says what it holds.
 */
export type Json<T> = string & { readonly __json?: T };
export const toJson = <T>(value: T): Json<T> => JSON.stringify(value) as Json<T>;
export const fromJson = <T>(text: Json<T>): T => JSON.parse(text) as T;

/** One exported file: what the manifest, a pack's listing and readers know of it. */
export interface StoredFile {
  path: string;
  contentType: string;
  /** sha256 of the bytes (base64url): an unchanged page is not rewritten; the preview's strong ETag. */
  sha: string;
  length: number;
  /** Written at (ms): the archive's mtime. */
  mtime: number;
  runId: string;
  /** The entry a page belongs to; null for site pages (home, lists, feeds, sitemap, redirects). */
  entryId: string | null;
  /** The bytes, in order: `[packId, offset, length]` (one part unless the file is bigger than a pack). */
  parts: [string, number, number][];
  /** Position in its first pack's `files` (dead marks name it). */
  slot: number;
}

/**
 * Many small files in one document: the engine pays per document written (5–10 ms each under
 * load), so a batch of 200 entries is one or two writes, not 400. `files` lists the files that
 * start here (archive order); `dead` marks the ones a later committed generation replaced or
 * removed (a mark counts only once its generation is live, so a run that never commits changes
 * nothing for readers).
 */
export interface ExportPackDoc {
  _id: string;
  siteId: string;
  generation: number;
  files: Json<StoredFile[]>;
  data: Binary;
  dead?: { slot: number; generation: number }[];
}
export const exportPacks = (db: Db) => db.collection<ExportPackDoc>(EXPORT_STORAGE);

/** path → file, in buckets by hash of the path (`<siteId>:<generation>:<bucket>`); each bucket has its own live version. */
export interface ExportManifestDoc {
  _id: string;
  siteId: string;
  generation: number;
  bucket: number;
  /** Sorted by path. */
  files: Json<StoredFile[]>;
}
export const exportManifest = (db: Db) => db.collection<ExportManifestDoc>('export_manifest');

/** What a batch of a run wrote and decided (`<siteId>:<generation>:e:<after>`), read by the run's finish. */
export interface ExportIndexDoc {
  _id: string;
  siteId: string;
  generation: number;
  files: Json<StoredFile[]>;
  /** Per entry looked at: its list row, or null when it is withdrawn (no pages). */
  changes: Json<{ entryId: string; row: EntryRow | null }[]>;
}
export const exportIndex = (db: Db) => db.collection<ExportIndexDoc>('export_index');

/**
 * A run's candidates, listed once by its plan (`<siteId>:<generation>:p:<after>`: the ids that
 * follow `after`, in `_id` order): each batch fetches its entries by `_id` instead of querying the
 * entries again (on the local engine every such query scans the whole collection).
 */
export interface ExportPlanDoc {
  _id: string;
  siteId: string;
  generation: number;
  ids: Json<string[]>;
  /** The run's last batch. */
  last: boolean;
}
export const exportPlan = (db: Db) => db.collection<ExportPlanDoc>('export_plan');

/**
 * The rows of the live output (what list pages, feeds and the sitemap show), in chunks
 * (`<siteId>:<generation>:<n>`), plus the site pages' paths and hashes: an incremental finish
 * renders the lists from them and the run's changes and knows which site pages changed, without
 * reading every entry or the whole manifest.
 */
export interface ExportRowsDoc {
  _id: string;
  siteId: string;
  generation: number;
  rows: Json<EntryRow[]>;
  /** The site pages of the output (in the first document): path, sha256, content type. */
  sitePages: Json<SitePage[]>;
}
export type SitePage = [path: string, sha: string, contentType: string];
export const exportRows = (db: Db) => db.collection<ExportRowsDoc>('export_rows');

/** The served output: switching it is one write of this (the commit). */
export interface LiveOutput {
  generation: number;
  buckets: number;
  /** Generation of each manifest bucket's live version. */
  versions: number[];
  rowChunks: number;
  files: number;
  bytes: number;
}

/** Left to delete once a generation is live (kept in the state so a retried finish completes it). */
export interface OutputGarbage {
  /** Everything of the site older than this generation (a full run). */
  below: number | null;
  manifests: string[];
  rows: string[];
  /** Packs that got dead marks: deleted when every file in them is dead. */
  marked: string[];
}

/** What list pages, feeds and the sitemap need of a published entry. */
export interface EntryRow {
  id: string;
  type: string;
  locale: string;
  slug: string;
  title: string;
  excerpt: string | null;
  publishedAt: string | null;
  updatedAt: string;
  /** taxonomy → term ids */
  terms: Record<string, string[]>;
  /** For a permalink rule with `%author%` (rows written before it was kept have none). */
  authorId?: string | null;
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
  /** The permalink rule's key: a change moves entry pages, so the run is full (absent on older outputs). */
  pathsKey?: string;
}

/** One row per site (`_id` = site id): what the last runs did and where incremental starts. */
export interface ExportStateDoc {
  _id: string;
  siteId: string;
  status: 'idle' | 'running';
  current: {
    runId: string;
    mode: ExportMode;
    startedAt: Date;
    generation: number;
    since: Date | null;
    basis: RenderBasis;
    /** Candidates of the run (its plan). */
    total?: number;
    /** Packs of the live output this run's finish is marking dead (cleaned if the run never commits). */
    marked?: string[];
  } | null;
  /** Last generation handed out: file versions sort by it. */
  generation: number;
  lastRun: RunSummary | null;
  /** Start of the last successful run: an incremental run renders entries changed since then. */
  lastSuccessStartedAt: Date | null;
  /** What the served output was rendered from. */
  basis: RenderBasis | null;
  output: { files: number; bytes: number };
  /** The served output (null: none, or one of the earlier GridFS layout, which is not read). */
  live?: LiveOutput | null;
  garbage?: OutputGarbage | null;
  /** Changes whenever the served output does (a finished run, a clear): the archive's ETag. */
  outputVersion: string | null;
  updatedAt: Date;
}

/** One per site in `site_state`, `_id` = `export:<siteId>` (`exportStateId`). */
export const exportStates = (db: Db) => siteStateCollection<ExportStateDoc>(db);
export const exportStateId = (siteId: string) => siteStateId('export', siteId);

/**
 * Run history: `site_state` documents (`_id` = `runs:<siteId>:<runId>`), at most RUN_HISTORY per
 * site, read as one `_id` range and listed newest first by `finishedAt`; one per run, written once.
 */
export interface ExportRunDoc extends RunSummary {
  _id: string;
  siteId: string;
}
export const exportRunId = (siteId: string, runId: string) => siteStateId('runs', `${siteId}:${runId}`);

/** Every run of the site kept, newest first (at most RUN_HISTORY: sorted as read). */
export async function siteRuns(db: Db, siteId: string, projection?: Record<string, 1>): Promise<ExportRunDoc[]> {
  const prefix = siteStateId('runs', siteId);
  const rows = await siteStateCollection<ExportRunDoc>(db)
    .find({ _id: { $gte: `${prefix}:`, $lt: `${prefix};` } }, projection ? { projection: { ...projection, finishedAt: 1 } } : {})
    .toArray();
  return rows.sort((a, b) => b.finishedAt.getTime() - a.finishedAt.getTime());
}

export async function readExportState(db: Db, siteId: string): Promise<ExportStateDoc | null> {
  return exportStates(db).findOne({ _id: exportStateId(siteId), siteId });
}
