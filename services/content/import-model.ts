import { z } from 'zod';
import { GridFSBucket, type Db } from 'mongodb';
import type { KeyScope } from '../core/principal.ts';
import { MEDIA_BUCKET } from '../media/model.ts';

/**
 * A content import (docs/content.md, "Import and export"): the uploaded NDJSON file is kept in
 * GridFS, in the media library's bucket (`media_files`: a bucket of its own would be four more
 * collections and indexes per workspace, docs/footprint.md; file ids never collide and the file is
 * deleted when the import ends), and one document per import (`content_imports`) holds its
 * checkpoint and report. Both appear on first use.
 */
export const IMPORTS_COLLECTION = 'content_imports';
/** Where imports started before the shared bucket keep their file (`ImportDoc.fileBucket` absent). */
export const LEGACY_IMPORT_FILES_BUCKET = 'content_import_files';

export const IMPORT_STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type ImportState = (typeof IMPORT_STATES)[number];
export const isFinished = (state: ImportState) => state === 'succeeded' || state === 'failed' || state === 'cancelled';

/** Rejected lines kept with their reason; more are only counted. */
export const REJECTIONS_KEPT = 100;
/** Largest accepted upload (the file is stored, then read in batches: memory does not grow with it). */
export const IMPORT_MAX_BYTES = 1024 * 1024 * 1024;

export interface Rejection {
  line: number;
  error: string;
}

export interface ImportDoc {
  _id: string;
  siteId: string;
  state: ImportState;
  fileId: string | null;
  /** The GridFS bucket holding `fileId` (absent: an import started before the shared bucket). */
  fileBucket?: string;
  bytes: number;
  /** Checkpoint: the byte offset and line number where the next batch starts. */
  offset: number;
  line: number;
  /**
   * A batch under way (a crash leaves it for the retry): its start and end, the ids its new entries
   * get (by `locale/slug`) and the entries it is changing, so the retry counts the attempt's writes as its own.
   */
  inFlight: { offset: number; nextOffset: number; nextLine: number; ids: Record<string, string>; updates: string[] } | null;
  linesRead: number;
  created: number;
  updated: number;
  unchanged: number;
  rejected: number;
  rejections: Rejection[];
  cancelRequested: boolean;
  error: string | null;
  /** The importing person and their key's scope: author of created entries; lines outside the scope are refused. */
  authorId: string | null;
  keyScope: KeyScope | null;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

export const importsCollection = (db: Db) => db.collection<ImportDoc>(IMPORTS_COLLECTION);
/** `metadata.kind` of an import's file in the shared bucket. */
export const IMPORT_FILE_KIND = 'content-import';

/** The bucket a new import's file goes to. */
export const importFiles = (db: Db) => new GridFSBucket(db, { bucketName: MEDIA_BUCKET });
/** The bucket holding this import's file. */
export const importFilesOf = (db: Db, job: Pick<ImportDoc, 'fileBucket'>) => new GridFSBucket(db, { bucketName: job.fileBucket ?? LEGACY_IMPORT_FILES_BUCKET });

export const ImportView = z.object({
  id: z.string(),
  state: z.enum(IMPORT_STATES),
  cancelRequested: z.boolean(),
  bytes: z.number().int(),
  linesRead: z.number().int().describe('lines read so far (the header and blank lines included)'),
  imported: z.number().int().describe('entries created or changed'),
  created: z.number().int(),
  updated: z.number().int(),
  unchanged: z.number().int().describe('entries already as the line says (a re-run changes nothing)'),
  rejected: z.number().int(),
  rejections: z.array(z.object({ line: z.number().int(), error: z.string() })).describe(`the first ${REJECTIONS_KEPT} rejected lines and why`),
  error: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  finishedAt: z.string().nullable(),
});

export const toImportView = (doc: ImportDoc): z.input<typeof ImportView> => ({
  id: doc._id,
  state: doc.state,
  cancelRequested: doc.cancelRequested,
  bytes: doc.bytes,
  linesRead: doc.linesRead,
  imported: doc.created + doc.updated,
  created: doc.created,
  updated: doc.updated,
  unchanged: doc.unchanged,
  rejected: doc.rejected,
  rejections: doc.rejections,
  error: doc.error,
  createdAt: doc.createdAt.toISOString(),
  updatedAt: doc.updatedAt.toISOString(),
  finishedAt: doc.finishedAt?.toISOString() ?? null,
});
