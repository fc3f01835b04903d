import { unviewed } from '../../core/site-config.ts';
import { dropIfExists, isNamespaceNotFound } from '../../core/mongo-errors.ts';
import { Binary, BSON, type Collection, type Db, type Document, type IndexDescription } from 'mongodb';
import { collectionFile, idFromText, ndjsonLines, objectKey, parseDocumentLine, type Manifest } from './archive.ts';
import type { BackupRow } from './model.ts';
import type { BackupStore } from './store.ts';
import type { Beat } from './steps.ts';
import { sideBySide } from './lanes.ts';

// The one reader of an archive into a database: a restore loads its own workspace with it, a clone
// a new one (with `rewrite`: new site ids, secrets left behind; clone-fixups.ts).

const INSERT_BATCH_DOCS = 2000;
const INSERT_BATCH_BYTES = 8 * 1024 * 1024;
const GRIDFS_DEFAULT_CHUNK = 255 * 1024;
/** Media files loaded side by side (each with one insert in flight while its next batch is read). */
const FILES_PARALLEL = 4;
/** A GridFS file's chunks per insert. */
const CHUNK_BATCH_BYTES = 4 * 1024 * 1024;

/** A document as it is written; null leaves it out. */
export type Rewrite = (doc: Document) => Document | null;

type Source = { store: BackupStore; row: BackupRow; manifest: Manifest };

/**
 * Keeps the indexes of a collection a load replaces, across retries: the first call records
 * `current()`, every later one (a step retried after the worker died, when the collection may
 * already be dropped) answers what was recorded.
 */
export interface IndexKeeper {
  keep(collection: string, current: () => Promise<IndexDescription[]>): Promise<IndexDescription[]>;
}

/** Index specs as stored with an IndexKeeper (EJSON text: keys may hold dots, filters `$`). */
export const indexesToText = (indexes: IndexDescription[]) => BSON.EJSON.stringify(indexes, { relaxed: false });
export const indexesFromText = (text: string) => BSON.EJSON.parse(text, { relaxed: false }) as IndexDescription[];

/** A collection's indexes but `_id`, as `createIndexes` takes them. */
async function indexesOf(collection: Collection): Promise<IndexDescription[]> {
  try {
    const listed = await collection.listIndexes().toArray();
    return listed.filter((index) => index.name !== '_id_').map(({ v: _v, ns: _ns, ...spec }) => spec as IndexDescription);
  } catch (error) {
    if (isNamespaceNotFound(error)) return [];
    throw error;
  }
}

/**
 * Empties a collection before it is loaded. With a keeper: its indexes are kept aside (across
 * retries), the collection dropped and the indexes made again on the empty collection, so the
 * inserts keep them as they go. On the local engine that beats a build after the load since its
 * writes got cheaper (session 10: restoring 100,000 entries 13.3 → 7.0 s, a bucket's chunks
 * 17.8 → 15.0 s: a build after reads every document back; bench/RESULTS.md), and it beats emptying an
 * indexed collection document by document. Without a keeper (a clone, into a new database):
 * `deleteMany`, indexes kept.
 */
async function empty(collection: Collection, keeper: IndexKeeper | undefined): Promise<void> {
  if (!keeper) {
    await collection.deleteMany({});
    return;
  }
  // Through the service's Db, a process's first write to a collection makes its declared indexes
  // first (core/first-write.ts): a write that changes nothing makes them now, so they are among the
  // indexes kept.
  await collection.updateOne({ _id: { $in: [] } }, { $unset: { unused: '' } });
  const indexes = await keeper.keep(collection.collectionName, () => indexesOf(collection));
  await dropIfExists(collection);
  if (indexes.length > 0) await collection.createIndexes(indexes);
}

/**
 * Inserts in batches with one insert in flight while the next batch is read (reading the archive
 * and writing the database overlap). `written` is called after each insert.
 */
function inserter(collection: Collection, written: (count: number) => void) {
  let inflight: Promise<void> = Promise.resolve();
  return {
    async insert(docs: Document[]) {
      await inflight;
      inflight = collection.insertMany(docs, { ordered: false }).then(() => written(docs.length));
      // Awaited by the next insert or `done`; a failure meanwhile is not an unhandled rejection.
      inflight.catch(() => undefined);
    },
    done: () => inflight,
  };
}

/**
 * Empties the collection and refills it from the archive's NDJSON in batches, each document through
 * `rewrite` (`empty` above for how, with or without a `keeper`). Answers the documents written.
 * Repeating it (a retried step) gives the same result.
 */
export async function loadCollection(db: Db, source: Source, name: string, beat: Beat, rewrite: Rewrite = (doc) => doc, keeper?: IndexKeeper): Promise<number> {
  // By its stored name: an archive made before `site_config` holds the collections it replaced (moved after the load).
  const collection = unviewed(db).collection(name);
  if (!source.manifest.collections.some((c) => c.name === name)) {
    await collection.deleteMany({});
    return 0;
  }
  await empty(collection, keeper);
  let documents = 0;
  const out = inserter(collection, (count) => {
    documents += count;
    beat();
  });
  let batch: Document[] = [];
  let size = 0;
  for await (const line of ndjsonLines(source.store.get(objectKey(source.row, collectionFile(name))) as AsyncIterable<Buffer>)) {
    const doc = rewrite(parseDocumentLine(line));
    size += line.length;
    if (doc) batch.push(doc);
    if (batch.length >= INSERT_BATCH_DOCS || size >= INSERT_BATCH_BYTES) {
      await out.insert(batch);
      batch = [];
      size = 0;
    }
  }
  if (batch.length > 0) await out.insert(batch);
  await out.done();
  return documents;
}

/**
 * Rebuilds a bucket's chunks from the archive's media files, at each file's `chunkSize` (its
 * `.files` documents are loaded with the collections; `rewriteId` maps a file id the same way
 * they were), `FILES_PARALLEL` files side by side. Answers the files written.
 */
export async function loadBucket(
  db: Db,
  source: Source,
  bucket: string,
  beat: Beat,
  rewriteId: (id: unknown) => unknown = (id) => id,
  keeper?: IndexKeeper,
): Promise<number> {
  const chunks = db.collection(`${bucket}.chunks`);
  await empty(chunks, keeper);
  const media = source.manifest.media.filter((m) => m.bucket === bucket);
  // Each file's chunk size, read once for the bucket (as many entries as the manifest's list of media already in memory).
  const chunkSizes = new Map<string, number>();
  for await (const info of db.collection(`${bucket}.files`).find({}, { projection: { chunkSize: 1 } })) {
    if (typeof info.chunkSize === 'number' && info.chunkSize > 0) chunkSizes.set(BSON.EJSON.stringify({ id: info._id }, { relaxed: false }), info.chunkSize);
  }
  // Each lane reads into two buffers of its own, reused file after file: one insert in flight while the next batch is read.
  const laneBuffers: Buffer[][] = [];
  const loadFile = async (entry: (typeof media)[number], lane: number) => {
    const id = rewriteId(idFromText(entry.id));
    const chunkSize = chunkSizes.get(BSON.EJSON.stringify({ id }, { relaxed: false })) ?? GRIDFS_DEFAULT_CHUNK;
    const batchBytes = Math.max(1, Math.floor(CHUNK_BATCH_BYTES / chunkSize)) * chunkSize;
    const buffers = (laneBuffers[lane] ??= []);
    for (const i of [0, 1]) if (!(buffers[i]?.length >= batchBytes)) buffers[i] = Buffer.allocUnsafe(batchBytes);
    const key = objectKey(source.row, entry.file);
    let position = 0;
    let n = 0;
    let inflight: Promise<unknown> = Promise.resolve();
    try {
      for (let which = 0; ; which ^= 1) {
        const into = buffers[which].subarray(0, batchBytes);
        const read = await source.store.read(key, into, position);
        position += read;
        const batch: Document[] = [];
        for (let at = 0; at < read; at += chunkSize) batch.push({ files_id: id, n: n++, data: new Binary(into.subarray(at, Math.min(at + chunkSize, read))) });
        // The buffer read into next was the one of the insert before this one: it must be done with it.
        await inflight;
        if (batch.length > 0) {
          inflight = chunks.insertMany(batch, { ordered: false });
          inflight.catch(() => undefined);
        }
        beat();
        if (read < batchBytes) break;
      }
      await inflight;
    } finally {
      // A failed read leaves no insert behind that still reads a buffer the lane hands to its next file.
      await inflight.catch(() => undefined);
    }
  };
  await sideBySide(media, FILES_PARALLEL, loadFile);
  return media.length;
}
