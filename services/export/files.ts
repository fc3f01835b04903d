import { createHash } from 'node:crypto';
import { Binary, MongoBulkWriteError, type Collection, type Db, type Filter, type OptionalUnlessRequiredId, type WithoutId } from 'mongodb';
import { EXPORT_BUCKET, exportEntryChanges, exportFiles, type ExportFileDoc, type ExportFileMeta } from './model.ts';

export const sha256 = (body: Buffer | string) => createHash('sha256').update(body).digest('base64url');

/**
 * One id per (generation, path): a retried activity rewrites the same file instead of adding a
 * second one, and ids sort by generation, so "the newest version of a path" is the highest id.
 */
export const fileId = (generation: number, path: string) => `g${String(generation).padStart(10, '0')}-${sha256(path).slice(0, 32)}`;

const chunks = (db: Db) => db.collection<ChunkDoc>(`${EXPORT_BUCKET}.chunks`);

/**
 * Storage layout, chosen for engines that only use `_id` and unique indexes (the local one scans
 * a whole collection for any other filter): every hot lookup goes by `_id`. Files are GridFS-shaped
 * (`export.files` / `export.chunks`), but this module writes them itself, with chunk ids derived
 * from the file id (`<fileId>#<n>`): a retried write overwrites the same documents, and readers
 * and deletes reach a file's chunks by id instead of by `files_id` (which costs a full scan of the
 * chunks collection per file there: 20,000 pages took minutes instead of seconds).
 */
export const CHUNK_SIZE = 255 * 1024;
/**
 * Bodies up to one chunk are kept in the files document itself (`data`, `inline: true`): one
 * document per file instead of two, and writes are what a run mostly costs on the local engine.
 */
const INLINE_MAX = CHUNK_SIZE;
export const chunkId = (fileId: string, n: number) => `${fileId}#${n}`;
const chunkCount = (length: number, chunkSize: number) => Math.max(1, Math.ceil(length / chunkSize));
type FileShape = Pick<ExportFileDoc, '_id' | 'length' | 'chunkSize' | 'inline'>;
const chunkIdsOf = (file: FileShape) => (file.inline ? [] : Array.from({ length: chunkCount(file.length, file.chunkSize) }, (_, n) => chunkId(file._id, n)));

interface ChunkDoc {
  _id: string;
  files_id: string;
  n: number;
  data: Binary;
}

const bytesOf = (data: Binary) => Buffer.from(data.buffer.buffer, data.buffer.byteOffset, data.position);

/** Files per write or read round trip (bounded: 200 pages are a few MB). */
const BATCH = 200;

async function deleteFiles(db: Db, files: FileShape[]): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < files.length; i += BATCH) {
    const slice = files.slice(i, i + BATCH);
    // The files document goes first: without it the file is not listed, so no reader meets a file
    // whose chunks are half gone; chunks left by a crash in between are overwritten by a retry.
    deleted += (await exportFiles(db).deleteMany({ _id: { $in: slice.map((f) => f._id) } })).deletedCount;
    const ids = slice.flatMap(chunkIdsOf);
    if (ids.length) await chunks(db).deleteMany({ _id: { $in: ids } });
  }
  return deleted;
}

const FILE_SHAPE = { projection: { _id: 1, length: 1, chunkSize: 1, inline: 1 } } as const;

/** The newest live version of a path (two live versions exist only while a finishing run commits). */
export async function liveFile(db: Db, siteId: string, path: string): Promise<ExportFileDoc | null> {
  const [file] = await exportFiles(db).find({ 'metadata.siteId': siteId, 'metadata.path': path, 'metadata.state': 'live' }).sort({ _id: -1 }).limit(1).toArray();
  return file ?? null;
}

/** sha and content type of the newest live version of each of `paths` (one query for all of them). */
async function liveVersions(db: Db, siteId: string, paths: string[]): Promise<Map<string, { sha: string; contentType: string }>> {
  const out = new Map<string, { sha: string; contentType: string }>();
  if (paths.length === 0) return out;
  const rows = exportFiles(db)
    .find({ 'metadata.siteId': siteId, 'metadata.state': 'live', 'metadata.path': { $in: paths } }, { projection: { _id: 1, 'metadata.path': 1, 'metadata.sha': 1, 'metadata.contentType': 1 } })
    .sort({ _id: -1 });
  for await (const row of rows) if (!out.has(row.metadata.path)) out.set(row.metadata.path, { sha: row.metadata.sha, contentType: row.metadata.contentType });
  return out;
}

export type StageInput = Omit<ExportFileMeta, 'state' | 'sha'> & { body: string | Buffer; unlessSame?: boolean };

/**
 * Stages files of a run (one site), a few round trips per 200 files. With `unlessSame`, a page
 * whose bytes equal the live version is not written at all ('same'): incremental runs rewrite
 * exactly the pages that changed. Idempotent: a retry rewrites the same ids.
 */
export async function stageFiles(db: Db, files: StageInput[]): Promise<('written' | 'same')[]> {
  const results: ('written' | 'same')[] = [];
  for (let i = 0; i < files.length; i += BATCH) results.push(...(await stageSlice(db, files.slice(i, i + BATCH))));
  return results;
}

async function stageSlice(db: Db, files: StageInput[]): Promise<('written' | 'same')[]> {
  const prepared = files.map((file) => {
    const body = typeof file.body === 'string' ? Buffer.from(file.body, 'utf8') : file.body;
    return { file, body, sha: sha256(body), id: fileId(file.generation, file.path) };
  });
  const compared = prepared.filter((p) => p.file.unlessSame);
  const live = compared.length ? await liveVersions(db, compared[0].file.siteId, compared.map((p) => p.file.path)) : new Map();
  const results = prepared.map((p) => {
    const current = p.file.unlessSame ? live.get(p.file.path) : undefined;
    return current && current.sha === p.sha && current.contentType === p.file.contentType ? ('same' as const) : ('written' as const);
  });
  const toWrite = prepared.filter((_, i) => results[i] === 'written');
  if (toWrite.length === 0) return results;
  // A retry meets its own earlier version: unlist it first, and drop chunks it had beyond the new count.
  const earlier = await exportFiles(db).find({ _id: { $in: toWrite.map((p) => p.id) } }, FILE_SHAPE).toArray();
  if (earlier.length) await exportFiles(db).deleteMany({ _id: { $in: earlier.map((f) => f._id) } });
  const chunkWrites = toWrite.filter((p) => p.body.length > INLINE_MAX).flatMap((p) =>
    Array.from({ length: chunkCount(p.body.length, CHUNK_SIZE) }, (_, n) => {
      const doc = { _id: chunkId(p.id, n), files_id: p.id, n, data: new Binary(p.body.subarray(n * CHUNK_SIZE, (n + 1) * CHUNK_SIZE)) };
      return { replaceOne: { filter: { _id: doc._id }, replacement: doc, upsert: true } };
    }),
  );
  if (chunkWrites.length) await insertOrReplace(chunks(db), chunkWrites.map((w) => w.replaceOne.replacement), earlier.length === 0);
  const fresh = new Set(chunkWrites.map((w) => w.replaceOne.filter._id));
  const extra = earlier.flatMap(chunkIdsOf).filter((id) => !fresh.has(id));
  if (extra.length) await chunks(db).deleteMany({ _id: { $in: extra } });
  const uploadDate = new Date();
  const docs = toWrite.map((p): ExportFileDoc => {
    const metadata: ExportFileMeta = { siteId: p.file.siteId, path: p.file.path, contentType: p.file.contentType, entryId: p.file.entryId, runId: p.file.runId, generation: p.file.generation, state: 'staged', sha: p.sha };
    const inline = p.body.length <= INLINE_MAX ? { inline: true as const, data: new Binary(p.body) } : {};
    return { _id: p.id, length: p.body.length, chunkSize: CHUNK_SIZE, uploadDate, filename: p.file.path, metadata, ...inline };
  });
  await insertOrReplace(exportFiles(db), docs, true);
  return results;
}

/**
 * Plain inserts when nothing of these ids should exist (a first attempt: inserts cost the engine
 * far less than upserts), upserts by id otherwise or when a crashed attempt left some behind.
 */
async function insertOrReplace<T extends { _id: string }>(collection: Collection<T>, docs: T[], fresh: boolean): Promise<void> {
  if (fresh) {
    try {
      await collection.insertMany(docs as OptionalUnlessRequiredId<T>[], { ordered: false });
      return;
    } catch (error) {
      if (!(error instanceof MongoBulkWriteError) || error.code !== 11000) throw error;
    }
  }
  await collection.bulkWrite(
    docs.map((doc) => ({ replaceOne: { filter: { _id: doc._id } as Filter<T>, replacement: doc as WithoutId<T>, upsert: true } })),
    { ordered: false },
  );
}

/** Stages one file of a run (see stageFiles). */
export async function stageFile(db: Db, file: StageInput): Promise<'written' | 'same'> {
  return (await stageFiles(db, [file]))[0];
}

/**
 * The bytes of a file, or of `range` (inclusive) of it, fetched by chunk id a few chunks per round
 * trip. Files written by the GridFS driver before this layout (chunk ids that are ObjectIds) are
 * read by `files_id` instead.
 */
export async function* readChunks(db: Db, file: FileShape & Pick<ExportFileDoc, 'data'>, range?: { start: number; end: number }): AsyncGenerator<Buffer> {
  if (file.length === 0) return;
  const start = range?.start ?? 0;
  const end = range?.end ?? file.length - 1;
  if (file.inline) {
    const data = file.data ?? (await exportFiles(db).findOne({ _id: file._id }, { projection: { data: 1 } }))?.data;
    if (!data) throw new Error(`export file ${file._id} is gone`);
    yield bytesOf(data).subarray(start, end + 1);
    return;
  }
  const first = Math.floor(start / file.chunkSize);
  const last = Math.floor(end / file.chunkSize);
  for (let n = first; n <= last; n += 8) {
    const ids = Array.from({ length: Math.min(8, last - n + 1) }, (_, k) => chunkId(file._id, n + k));
    let rows = await chunks(db).find({ _id: { $in: ids } }).toArray();
    if (rows.length !== ids.length) rows = await chunks(db).find({ files_id: file._id, n: { $gte: n, $lt: n + ids.length } }).toArray();
    rows.sort((a, b) => a.n - b.n);
    for (const [k, row] of rows.entries()) {
      if (row.n !== n + k) throw new Error(`export chunk ${n + k} of ${file._id} is missing`);
      const bytes = bytesOf(row.data);
      const offset = row.n * file.chunkSize;
      yield bytes.subarray(Math.max(0, start - offset), Math.min(bytes.length, end + 1 - offset));
    }
    if (rows.length !== ids.length) throw new Error(`export chunk ${n + rows.length} of ${file._id} is missing`);
  }
}

/**
 * Whole bodies of small files (each within one chunk), one round trip for all of them: the
 * archive reads pages this way. Files not found by chunk id (driver-written ones) are left out;
 * callers stream those with readChunks.
 */
export async function readSmallBodies(db: Db, files: FileShape[]): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const wanted = files.filter((f) => f.length > 0 && f.length <= f.chunkSize);
  const inline = wanted.filter((f) => f.inline).map((f) => f._id);
  const chunked = wanted.filter((f) => !f.inline).map((f) => chunkId(f._id, 0));
  if (inline.length) for await (const row of exportFiles(db).find({ _id: { $in: inline } }, { projection: { data: 1 } })) if (row.data) out.set(row._id, bytesOf(row.data));
  if (chunked.length) for await (const row of chunks(db).find({ _id: { $in: chunked } })) out.set(row.files_id, bytesOf(row.data));
  return out;
}

/** Drops every staged file except those of `keepRunId` (a cancelled, failed or killed run's output). */
export async function discardStaged(db: Db, siteId: string, keepRunId: string | null = null): Promise<number> {
  const filter = { 'metadata.siteId': siteId, 'metadata.state': 'staged' as const, ...(keepRunId ? { 'metadata.runId': { $ne: keepRunId } } : {}) };
  const rows = await exportFiles(db).find(filter, FILE_SHAPE).toArray();
  return deleteFiles(db, rows);
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
    const rows = await exportFiles(db).find(older, FILE_SHAPE).toArray();
    return deleteFiles(db, rows);
  }
  const written = await exportFiles(db).find({ 'metadata.siteId': siteId, 'metadata.runId': run.runId }, { projection: { 'metadata.path': 1 } }).toArray();
  const writtenPaths = written.map((row) => row.metadata.path);
  for (let i = 0; i < writtenPaths.length; i += 500) {
    const rows = await exportFiles(db).find({ ...older, 'metadata.path': { $in: writtenPaths.slice(i, i + 500) } }, FILE_SHAPE).toArray();
    await deleteFiles(db, rows);
  }
  // Entries the run looked at keep exactly the paths it recorded for them (none when withdrawn).
  for await (const change of exportEntryChanges(db).find({ siteId, runId: run.runId })) {
    const rows = await exportFiles(db).find({ ...older, 'metadata.entryId': change.entryId, 'metadata.path': { $nin: change.keep } }, FILE_SHAPE).toArray();
    removed += await deleteFiles(db, rows);
  }
  const siteRows = await exportFiles(db).find({ ...older, 'metadata.entryId': null, 'metadata.path': { $nin: run.sitePaths } }, FILE_SHAPE).toArray();
  removed += await deleteFiles(db, siteRows);
  return removed;
}

export async function clearExportFiles(db: Db, siteId: string): Promise<number> {
  const rows = await exportFiles(db).find({ 'metadata.siteId': siteId }, FILE_SHAPE).toArray();
  return deleteFiles(db, rows);
}

/**
 * The served output, one row per path (newest live version), sorted by path. A cursor: callers
 * stream it (the archive reads it twice, never holding the list).
 */
export async function* liveListing(db: Db, siteId: string): AsyncGenerator<ExportFileDoc> {
  let previous: string | null = null;
  const cursor = exportFiles(db)
    .find({ 'metadata.siteId': siteId, 'metadata.state': 'live' }, { projection: { _id: 1, length: 1, chunkSize: 1, inline: 1, uploadDate: 1, metadata: 1, filename: 1 } })
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
  for await (const chunk of readChunks(db, file)) parts.push(chunk);
  return { body: Buffer.concat(parts), file };
}
