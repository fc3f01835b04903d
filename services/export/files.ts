import { createHash } from 'node:crypto';
import type { Db } from 'mongodb';
import { EXPORT_BUCKET, exportBucket, exportEntryChanges, exportFiles, type ExportFileDoc, type ExportFileMeta } from './model.ts';

export const sha256 = (body: Buffer | string) => createHash('sha256').update(body).digest('base64url');

/**
 * One id per (generation, path): a retried activity rewrites the same file instead of adding a
 * second one, and ids sort by generation, so "the newest version of a path" is the highest id.
 */
export const fileId = (generation: number, path: string) => `g${String(generation).padStart(10, '0')}-${sha256(path).slice(0, 32)}`;

const chunks = (db: Db) => db.collection(`${EXPORT_BUCKET}.chunks`);

async function deleteByIds(db: Db, ids: string[]): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < ids.length; i += 500) {
    const slice = ids.slice(i, i + 500);
    // The files document goes first: without it the file is not listed, so no reader meets a file
    // whose chunks are half gone; chunks left by a crash in between are removed by the next retry.
    deleted += (await exportFiles(db).deleteMany({ _id: { $in: slice } })).deletedCount;
    await chunks(db).deleteMany({ files_id: { $in: slice } });
  }
  return deleted;
}

/** The newest live version of a path (two live versions exist only while a finishing run commits). */
export async function liveFile(db: Db, siteId: string, path: string): Promise<ExportFileDoc | null> {
  const [file] = await exportFiles(db).find({ 'metadata.siteId': siteId, 'metadata.path': path, 'metadata.state': 'live' }).sort({ _id: -1 }).limit(1).toArray();
  return file ?? null;
}

/**
 * Stages one file of a run. With `unlessSame`, a page whose bytes equal the live version is not
 * written at all ('same'): incremental runs rewrite exactly the pages that changed.
 */
export async function stageFile(
  db: Db,
  file: Omit<ExportFileMeta, 'state' | 'sha'> & { body: string | Buffer; unlessSame?: boolean },
): Promise<'written' | 'same'> {
  const body = typeof file.body === 'string' ? Buffer.from(file.body, 'utf8') : file.body;
  const sha = sha256(body);
  if (file.unlessSame) {
    const live = await liveFile(db, file.siteId, file.path);
    if (live && live.metadata.sha === sha && live.metadata.contentType === file.contentType) return 'same';
  }
  const id = fileId(file.generation, file.path);
  await deleteByIds(db, [id]);
  await chunks(db).deleteMany({ files_id: id });
  const metadata: ExportFileMeta = { siteId: file.siteId, path: file.path, contentType: file.contentType, entryId: file.entryId, runId: file.runId, generation: file.generation, state: 'staged', sha };
  const upload = exportBucket(db).openUploadStreamWithId(id as never, file.path, { metadata });
  await new Promise<void>((resolve, reject) => {
    upload.once('error', reject);
    upload.end(body, () => resolve());
  });
  return 'written';
}

/** Drops every staged file except those of `keepRunId` (a cancelled, failed or killed run's output). */
export async function discardStaged(db: Db, siteId: string, keepRunId: string | null = null): Promise<number> {
  const filter = { 'metadata.siteId': siteId, 'metadata.state': 'staged' as const, ...(keepRunId ? { 'metadata.runId': { $ne: keepRunId } } : {}) };
  const rows = await exportFiles(db).find(filter, { projection: { _id: 1 } }).toArray();
  return deleteByIds(db, rows.map((row) => row._id));
}

/**
 * Makes a run's staged files the served output (idempotent: a retried finish repeats it harmlessly).
 * Order matters for readers: the new versions go live first (the newest version wins), then what
 * they replace is deleted: older versions of the same paths, pages of entries the run withdrew or
 * moved, site pages no longer produced, and after a full run everything older.
 */
export async function commitRun(
  db: Db,
  siteId: string,
  run: { runId: string; generation: number; mode: 'full' | 'incremental'; sitePaths: string[] },
): Promise<number> {
  await exportFiles(db).updateMany({ 'metadata.siteId': siteId, 'metadata.runId': run.runId, 'metadata.state': 'staged' }, { $set: { 'metadata.state': 'live' } });
  const older = { 'metadata.siteId': siteId, 'metadata.generation': { $lt: run.generation } };
  let removed = 0;
  if (run.mode === 'full') {
    const rows = await exportFiles(db).find(older, { projection: { _id: 1 } }).toArray();
    return deleteByIds(db, rows.map((row) => row._id));
  }
  const written = await exportFiles(db).find({ 'metadata.siteId': siteId, 'metadata.runId': run.runId }, { projection: { 'metadata.path': 1 } }).toArray();
  const writtenPaths = written.map((row) => row.metadata.path);
  for (let i = 0; i < writtenPaths.length; i += 500) {
    const rows = await exportFiles(db).find({ ...older, 'metadata.path': { $in: writtenPaths.slice(i, i + 500) } }, { projection: { _id: 1 } }).toArray();
    await deleteByIds(db, rows.map((row) => row._id));
  }
  // Entries the run looked at keep exactly the paths it recorded for them (none when withdrawn).
  for await (const change of exportEntryChanges(db).find({ siteId, runId: run.runId })) {
    const rows = await exportFiles(db).find({ ...older, 'metadata.entryId': change.entryId, 'metadata.path': { $nin: change.keep } }, { projection: { _id: 1 } }).toArray();
    removed += await deleteByIds(db, rows.map((row) => row._id));
  }
  const siteRows = await exportFiles(db).find({ ...older, 'metadata.entryId': null, 'metadata.path': { $nin: run.sitePaths } }, { projection: { _id: 1 } }).toArray();
  removed += await deleteByIds(db, siteRows.map((row) => row._id));
  return removed;
}

export async function clearExportFiles(db: Db, siteId: string): Promise<number> {
  const rows = await exportFiles(db).find({ 'metadata.siteId': siteId }, { projection: { _id: 1 } }).toArray();
  return deleteByIds(db, rows.map((row) => row._id));
}

/**
 * The served output, one row per path (newest live version), sorted by path. A cursor: callers
 * stream it (the archive reads it twice, never holding the list).
 */
export async function* liveListing(db: Db, siteId: string): AsyncGenerator<ExportFileDoc> {
  let previous: string | null = null;
  const cursor = exportFiles(db)
    .find({ 'metadata.siteId': siteId, 'metadata.state': 'live' }, { projection: { _id: 1, length: 1, uploadDate: 1, metadata: 1, filename: 1 } })
    .sort({ 'metadata.path': 1, _id: -1 });
  for await (const file of cursor) {
    if (file.metadata.path === previous) continue;
    previous = file.metadata.path;
    yield file;
  }
}

export async function outputFigures(db: Db, siteId: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  for await (const file of liveListing(db, siteId)) {
    files += 1;
    bytes += file.length;
  }
  return { files, bytes };
}

/** The served bytes of a path (small files: pages, feeds, rules). */
export async function readExportFile(db: Db, siteId: string, path: string): Promise<{ body: Buffer; file: ExportFileDoc } | null> {
  const file = await liveFile(db, siteId, path);
  if (!file) return null;
  const parts: Buffer[] = [];
  for await (const chunk of exportBucket(db).openDownloadStream(file._id as never)) parts.push(chunk as Buffer);
  return { body: Buffer.concat(parts), file };
}
