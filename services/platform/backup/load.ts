import { Binary, type Db, type Document } from 'mongodb';
import { collectionFile, idFromText, ndjsonLines, objectKey, parseDocumentLine, type Manifest } from './archive.ts';
import type { BackupRow } from './model.ts';
import type { BackupStore } from './store.ts';
import type { Beat } from './steps.ts';

// The one reader of an archive into a database: a restore loads its own workspace with it, a clone
// a new one (with `rewrite`: new site ids, secrets left behind; clone-fixups.ts).

const INSERT_BATCH_DOCS = 500;
const INSERT_BATCH_BYTES = 4 * 1024 * 1024;
const GRIDFS_DEFAULT_CHUNK = 255 * 1024;

/** A document as it is written; null leaves it out. */
export type Rewrite = (doc: Document) => Document | null;

/**
 * Empties the collection (`deleteMany`: its indexes are kept) and refills it from the archive's
 * NDJSON in batches, each document through `rewrite`. Answers the documents written. Repeating it
 * (a retried step) gives the same result.
 */
export async function loadCollection(
  db: Db,
  source: { store: BackupStore; row: BackupRow; manifest: Manifest },
  name: string,
  beat: Beat,
  rewrite: Rewrite = (doc) => doc,
): Promise<number> {
  const collection = db.collection(name);
  await collection.deleteMany({});
  if (!source.manifest.collections.some((c) => c.name === name)) return 0;
  let documents = 0;
  let batch: Document[] = [];
  let size = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    await collection.insertMany(batch, { ordered: false });
    documents += batch.length;
    batch = [];
    size = 0;
    beat();
  };
  for await (const line of ndjsonLines(source.store.get(objectKey(source.row, collectionFile(name))) as AsyncIterable<Buffer>)) {
    const doc = rewrite(parseDocumentLine(line));
    size += line.length;
    if (doc) batch.push(doc);
    if (batch.length >= INSERT_BATCH_DOCS || size >= INSERT_BATCH_BYTES) await flush();
  }
  await flush();
  return documents;
}

/**
 * Rebuilds a bucket's chunks from the archive's media files, at each file's `chunkSize` (its
 * `.files` documents are loaded with the collections; `rewriteId` maps a file id the same way
 * they were). Answers the files written.
 */
export async function loadBucket(
  db: Db,
  source: { store: BackupStore; row: BackupRow; manifest: Manifest },
  bucket: string,
  beat: Beat,
  rewriteId: (id: unknown) => unknown = (id) => id,
): Promise<number> {
  const chunks = db.collection(`${bucket}.chunks`);
  await chunks.deleteMany({});
  let files = 0;
  for (const media of source.manifest.media.filter((m) => m.bucket === bucket)) {
    const id = rewriteId(idFromText(media.id));
    const info = await db.collection(`${bucket}.files`).findOne({ _id: id as never }, { projection: { chunkSize: 1 } });
    const chunkSize = typeof info?.chunkSize === 'number' && info.chunkSize > 0 ? info.chunkSize : GRIDFS_DEFAULT_CHUNK;
    let n = 0;
    let pending: Buffer = Buffer.alloc(0);
    let batch: Document[] = [];
    const flush = async () => {
      if (batch.length > 0) await chunks.insertMany(batch);
      batch = [];
      beat();
    };
    const take = async (bytes: Buffer) => {
      batch.push({ files_id: id, n: n++, data: new Binary(bytes) });
      if (batch.length * chunkSize >= INSERT_BATCH_BYTES) await flush();
    };
    for await (const chunk of source.store.get(objectKey(source.row, media.file)) as AsyncIterable<Buffer>) {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      while (pending.length >= chunkSize) {
        await take(Buffer.from(pending.subarray(0, chunkSize)));
        pending = pending.subarray(chunkSize);
      }
    }
    if (pending.length > 0) await take(Buffer.from(pending));
    await flush();
    files++;
  }
  return files;
}
