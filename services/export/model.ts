import { GridFSBucket, type Db } from 'mongodb';

export const EXPORT_MODES = ['full', 'incremental'] as const;
export type ExportMode = (typeof EXPORT_MODES)[number];

/**
 * The export output lives in the GridFS bucket `export` of the workspace database: every gateway
 * and worker reaches it (a DATA_DIR folder would exist on one machine only), it is dropped with
 * the workspace. A rewrite uploads the new version before deleting the old one (files.ts).
 */
export const EXPORT_BUCKET = 'export';
export const exportBucket = (db: Db) => new GridFSBucket(db, { bucketName: EXPORT_BUCKET });
export const exportFiles = (db: Db) => db.collection<ExportFileDoc>(`${EXPORT_BUCKET}.files`);

/** GridFS files document of one exported file (GridFS keeps the site in `metadata`). */
export interface ExportFileDoc {
  _id: string;
  length: number;
  filename: string;
  uploadDate: Date;
  metadata: { siteId: string; path: string; contentType: string; entryId: string | null; runId: string };
}

export interface RunSummary {
  runId: string;
  mode: ExportMode;
  status: 'succeeded' | 'failed';
  /** The run requests this run served (requests made while a run waited are merged). */
  requestIds: string[];
  startedAt: Date;
  finishedAt: Date;
  rendered: number;
  removed: number;
  error: string | null;
}

/** One row per site (`_id` = site id): what the last runs did and where incremental starts. */
export interface ExportStateDoc {
  _id: string;
  siteId: string;
  status: 'idle' | 'running';
  current: { runId: string; mode: ExportMode; startedAt: Date } | null;
  lastRun: RunSummary | null;
  /** Start of the last successful run: an incremental run renders entries changed since then. */
  lastSuccessStartedAt: Date | null;
  output: { files: number; bytes: number };
  updatedAt: Date;
}

export const exportStates = (db: Db) => db.collection<ExportStateDoc>('export_state');

export async function readExportState(db: Db, siteId: string): Promise<ExportStateDoc | null> {
  return exportStates(db).findOne({ _id: siteId, siteId });
}

/** Identifies a site for the workflow and its activities (ids only: the workflow carries no handles). */
export interface ExportRef {
  workspaceId: string;
  siteId: string;
}

