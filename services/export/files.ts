import type { Db } from 'mongodb';
import { newId } from '../core/ids.ts';
import { EXPORT_BUCKET, exportBucket, exportFiles, type ExportFileDoc } from './model.ts';

async function deleteByIds(db: Db, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  // Chunks first: a files document marks a complete file, so a crash in between leaves no half file listed.
  await db.collection(`${EXPORT_BUCKET}.chunks`).deleteMany({ files_id: { $in: ids } });
  const { deletedCount } = await exportFiles(db).deleteMany({ _id: { $in: ids } });
  return deletedCount;
}

/**
 * Writes (or rewrites) one export file: the new version is uploaded first, then older versions of
 * the same path are deleted, so a reader always finds the page (the old or the new one) and a
 * retried activity ends with one version just the same.
 */
export async function writeExportFile(
  db: Db,
  file: { siteId: string; path: string; contentType: string; entryId: string | null; runId: string; body: string },
): Promise<void> {
  const id = newId();
  const upload = exportBucket(db).openUploadStreamWithId(id as never, file.path, {
    metadata: { siteId: file.siteId, path: file.path, contentType: file.contentType, entryId: file.entryId, runId: file.runId },
  });
  await new Promise<void>((resolve, reject) => {
    upload.once('error', reject);
    upload.end(Buffer.from(file.body, 'utf8'), () => resolve());
  });
  const older = await exportFiles(db)
    .find({ 'metadata.siteId': file.siteId, 'metadata.path': file.path, _id: { $ne: id } }, { projection: { _id: 1 } })
    .toArray();
  await deleteByIds(db, older.map((row) => row._id));
}

/** Removes an entry's files except the paths given (a renamed slug leaves no stale page). */
export async function removeEntryFiles(db: Db, siteId: string, entryId: string, keepPaths: string[] = []): Promise<number> {
  const rows = await exportFiles(db)
    .find({ 'metadata.siteId': siteId, 'metadata.entryId': entryId }, { projection: { _id: 1, metadata: 1 } })
    .toArray();
  return deleteByIds(db, rows.filter((row) => !keepPaths.includes(row.metadata.path)).map((row) => row._id));
}

/** After a full run: every file this run did not write belongs to an entry that is gone. */
export async function sweepStaleFiles(db: Db, siteId: string, runId: string): Promise<number> {
  const rows = await exportFiles(db)
    .find({ 'metadata.siteId': siteId, 'metadata.runId': { $ne: runId } }, { projection: { _id: 1 } })
    .toArray();
  return deleteByIds(db, rows.map((row) => row._id));
}

export async function clearExportFiles(db: Db, siteId: string): Promise<number> {
  const rows = await exportFiles(db).find({ 'metadata.siteId': siteId }, { projection: { _id: 1 } }).toArray();
  return deleteByIds(db, rows.map((row) => row._id));
}

export async function outputFigures(db: Db, siteId: string): Promise<{ files: number; bytes: number }> {
  const rows = await exportFiles(db).find({ 'metadata.siteId': siteId }, { projection: { length: 1 } }).toArray();
  return { files: rows.length, bytes: rows.reduce((sum, row) => sum + row.length, 0) };
}

/** The newest version of a file (two exist only for the moment a rewrite takes). */
export async function readExportFile(db: Db, siteId: string, path: string): Promise<{ body: Buffer; file: ExportFileDoc } | null> {
  const [file] = await exportFiles(db).find({ 'metadata.siteId': siteId, 'metadata.path': path }).sort({ _id: -1 }).limit(1).toArray();
  if (!file) return null;
  const chunks: Buffer[] = [];
  for await (const chunk of exportBucket(db).openDownloadStream(file._id as never)) chunks.push(chunk as Buffer);
  return { body: Buffer.concat(chunks), file };
}
