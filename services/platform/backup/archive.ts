import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { BSON, type Document } from 'mongodb';
import { entryHead } from '../../export/archive.ts';
import type { BackupStore } from './store.ts';
import type { BackupPartRow, BackupRow } from './model.ts';

/**
 * The backup archive (docs/backups.md): `manifest.json`, one canonical-EJSON NDJSON file per
 * collection (`collections/<name>.ndjson`: ObjectId, Date, Binary, Int32/Int64/Double survive),
 * and each GridFS file's bytes (`media/<bucket>/<hex of the id's EJSON>`). In the store each is its
 * own object under `<workspaceId>/<backupId>/`; the download joins them into one tar as it streams.
 */
export const BACKUP_FORMAT = 'cwb-workspace-backup';
export const BACKUP_FORMAT_VERSION = 1;
export const MANIFEST_FILE = 'manifest.json';

export interface ManifestCollection {
  name: string;
  file: string;
  documents: number;
  bytes: number;
  sha256: string;
}

export interface ManifestMedia {
  bucket: string;
  /** The file's `_id`, canonical EJSON. */
  id: string;
  file: string;
  bytes: number;
  sha256: string;
}

export interface Manifest {
  format: typeof BACKUP_FORMAT;
  formatVersion: number;
  workspaceId: string;
  backupId: string;
  createdAt: string;
  finishedAt: string;
  collections: ManifestCollection[];
  buckets: string[];
  media: ManifestMedia[];
}

export const backupPrefix = (workspaceId: string, backupId: string) => `${workspaceId}/${backupId}`;
export const objectKey = (row: Pick<BackupRow, '_id' | 'workspaceId'>, file: string) => `${backupPrefix(row.workspaceId, row._id)}/${file}`;

/** Collection names are free text in MongoDB: the file name carries them as hex when they hold anything else. */
export const collectionFile = (name: string) =>
  /^[A-Za-z0-9_.-]{1,120}$/.test(name) && !name.startsWith('.') ? `collections/${name}.ndjson` : `collections/x-${Buffer.from(name).toString('hex')}.ndjson`;
export const mediaFile = (bucket: string, id: string) => `media/${bucket}/${Buffer.from(id).toString('hex')}`;

export const idToText = (id: unknown) => BSON.EJSON.stringify({ id }, { relaxed: false });
export const idFromText = (text: string): unknown => (BSON.EJSON.parse(text, { relaxed: false }) as { id: unknown }).id;

/** One document as one NDJSON line, lossless. */
export const documentLine = (doc: Document) => `${BSON.EJSON.stringify(doc, { relaxed: false })}\n`;
export const parseDocumentLine = (line: string): Document => BSON.EJSON.parse(line, { relaxed: false }) as Document;

/** Bytes passed through with their sha256 and count, for a part written to the store. */
export function hashing(source: AsyncIterable<Buffer>) {
  const hash = createHash('sha256');
  const result = { bytes: 0, sha256: '' };
  async function* body() {
    for await (const chunk of source) {
      hash.update(chunk);
      result.bytes += chunk.length;
      yield chunk;
    }
    result.sha256 = hash.digest('hex');
  }
  return { body: body(), result };
}

/** The lines of an NDJSON object, one string at a time (memory: one chunk plus one line). */
export async function* ndjsonLines(stream: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  let rest = '';
  for await (const chunk of stream) {
    rest += chunk.toString();
    let at = rest.indexOf('\n');
    while (at !== -1) {
      if (at > 0) yield rest.slice(0, at);
      rest = rest.slice(at + 1);
      at = rest.indexOf('\n');
    }
  }
  if (rest) yield rest;
}

/** The manifest's bytes, from the recorded parts (read as a cursor: one part row at a time in memory). */
export async function* manifestBytes(
  row: BackupRow,
  finishedAt: Date,
  buckets: readonly string[],
  parts: AsyncIterable<BackupPartRow>,
): AsyncGenerator<Buffer> {
  const head = {
    format: BACKUP_FORMAT,
    formatVersion: BACKUP_FORMAT_VERSION,
    workspaceId: row.workspaceId,
    backupId: row._id,
    createdAt: row.createdAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    buckets,
  };
  yield Buffer.from(`${JSON.stringify(head).slice(0, -1)},"collections":[`);
  let first = true;
  let firstMedia = true;
  // Parts come collections first (kind sorts), so the two lists are written one after the other.
  for await (const part of parts) {
    if (part.kind === 'collection') {
      const entry: ManifestCollection = { name: part.name, file: part.file, documents: part.documents, bytes: part.bytes, sha256: part.sha256 };
      yield Buffer.from(`${first ? '' : ','}\n${JSON.stringify(entry)}`);
      first = false;
    } else {
      if (firstMedia) yield Buffer.from('],"media":[');
      const entry: ManifestMedia = { bucket: part.name, id: part.id!, file: part.file, bytes: part.bytes, sha256: part.sha256 };
      yield Buffer.from(`${firstMedia ? '' : ','}\n${JSON.stringify(entry)}`);
      firstMedia = false;
    }
  }
  yield Buffer.from(firstMedia ? '],"media":[]}\n' : ']}\n');
}

/** Every file of the archive in tar order: the manifest first, then collections and media as listed. */
export function archiveFiles(manifest: Manifest, manifestBytes: number) {
  return [{ file: MANIFEST_FILE, bytes: manifestBytes }, ...manifest.collections, ...manifest.media].map(({ file, bytes }) => ({ file, bytes }));
}

const BLOCK = 512;
const padded = (size: number) => Math.ceil(size / BLOCK) * BLOCK;

/** The tar's exact length (headers are a pure function of path, size and time). */
export function tarLength(files: readonly { file: string; bytes: number }[], mtime: number): number {
  return files.reduce((sum, { file, bytes }) => sum + entryHead({ path: file, length: bytes, mtime }).length + padded(bytes), BLOCK * 2);
}

/** The archive as one POSIX tar, streamed from the store object by object (memory: one chunk). */
export function tarStream(store: BackupStore, row: BackupRow, files: readonly { file: string; bytes: number }[], mtime: number): Readable {
  async function* generate(): AsyncGenerator<Buffer> {
    for (const { file, bytes } of files) {
      yield entryHead({ path: file, length: bytes, mtime });
      yield* store.get(objectKey(row, file)) as AsyncIterable<Buffer>;
      if (padded(bytes) > bytes) yield Buffer.alloc(padded(bytes) - bytes);
    }
    yield Buffer.alloc(BLOCK * 2);
  }
  return Readable.from(generate(), { objectMode: false });
}
