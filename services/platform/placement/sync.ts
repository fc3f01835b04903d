import { BSON, type AnyBulkWriteOperation, type Db, type Document, type Filter } from 'mongodb';

const byIds = (ids: readonly unknown[]): Filter<Document> => ({ _id: { $in: ids } }) as Filter<Document>;

/** Marks a move's whole-collection reads, which read everything by design (test/foundation/index-coverage.test.ts). */
export const WHOLE_COLLECTION_READ = 'move: whole collection';

/** Documents per write to the target (and at most BATCH_BYTES); GridFS chunks are read 16 at a time (255 kB each). */
const BATCH = 500;
const BATCH_BYTES = 8 * 1024 * 1024;
const ID_BATCH = 1000;

const readBatch = (name: string) => (name.endsWith('.chunks') ? 16 : BATCH);

/** The workspace's collection names (system collections aside). */
export async function collectionNames(db: Db): Promise<string[]> {
  const listed = await db.listCollections({}, { nameOnly: true }).toArray();
  return listed
    .map((c) => c.name)
    .filter((name) => !name.startsWith('system.'))
    .sort();
}

/** The collection and its indexes on the target (idempotent: an existing one is kept). */
export async function prepareCollection(source: Db, target: Db, name: string): Promise<void> {
  if (!(await target.listCollections({ name }, { nameOnly: true }).hasNext())) {
    await target.createCollection(name).catch((error: { code?: number }) => {
      if (error.code !== 48) throw error; // NamespaceExists: made meanwhile
    });
  }
  const indexes = (await source.collection(name).listIndexes().toArray())
    .filter((index) => index.name !== '_id_')
    .map(({ v: _v, ns: _ns, ...index }) => index as { key: Document; name: string });
  if (indexes.length) await target.collection(name).createIndexes(indexes);
}

/** Writes documents to the target as they are on the source (replace or insert), in bounded batches. */
async function writeAll(target: Db, name: string, docs: AsyncIterable<Document>, beat: () => void): Promise<number> {
  let ops: AnyBulkWriteOperation[] = [];
  let bytes = 0;
  let written = 0;
  const flush = async () => {
    if (!ops.length) return;
    await target.collection(name).bulkWrite(ops, { ordered: false });
    written += ops.length;
    ops = [];
    bytes = 0;
    beat();
  };
  for await (const doc of docs) {
    ops.push({ replaceOne: { filter: { _id: doc._id }, replacement: doc, upsert: true } });
    bytes += BSON.calculateObjectSize(doc);
    if (ops.length >= BATCH || bytes >= BATCH_BYTES) await flush();
  }
  await flush();
  return written;
}

/**
 * One collection made equal on the target: every source document written, then every target
 * document the source no longer has removed. Idempotent; memory bounded by the batches.
 */
export async function syncCollection(source: Db, target: Db, name: string, beat: () => void): Promise<number> {
  const cursor = source.collection(name).find({}, { batchSize: readBatch(name), comment: WHOLE_COLLECTION_READ });
  const written = await writeAll(target, name, cursor, beat);
  let ids: unknown[] = [];
  const prune = async () => {
    const kept = await source
      .collection(name)
      .find(byIds(ids), { projection: { _id: 1 } })
      .toArray();
    const left = new Set(kept.map((doc) => BSON.EJSON.stringify(doc._id)));
    const gone = ids.filter((id) => !left.has(BSON.EJSON.stringify(id)));
    if (gone.length) await target.collection(name).deleteMany(byIds(gone));
    ids = [];
    beat();
  };
  for await (const doc of target.collection(name).find({}, { projection: { _id: 1 }, batchSize: ID_BATCH, comment: WHOLE_COLLECTION_READ })) {
    ids.push(doc._id);
    if (ids.length >= ID_BATCH) await prune();
  }
  if (ids.length) await prune();
  return written;
}

/** These documents made equal on the target: copied as they are now on the source, or removed there. */
export async function syncDocuments(source: Db, target: Db, name: string, ids: readonly unknown[], beat: () => void): Promise<void> {
  const size = readBatch(name);
  for (let at = 0; at < ids.length; at += size) {
    const batch = ids.slice(at, at + size);
    const docs = await source.collection(name).find(byIds(batch)).toArray();
    const present = new Set(docs.map((doc) => BSON.EJSON.stringify(doc._id)));
    if (docs.length) {
      await target.collection(name).bulkWrite(
        docs.map((doc) => ({ replaceOne: { filter: { _id: doc._id }, replacement: doc, upsert: true } })),
        { ordered: false },
      );
    }
    const gone = batch.filter((id) => !present.has(BSON.EJSON.stringify(id)));
    if (gone.length) await target.collection(name).deleteMany(byIds(gone));
    beat();
  }
}

/**
 * Collections (these, or all of both databases) whose document counts differ (empty: equal).
 * `quick`: the collections' own counts (metadata, no scan), exact while nothing writes, as under the switch.
 */
export async function countDifferences(source: Db, target: Db, only?: readonly string[], quick = false): Promise<{ name: string; text: string }[]> {
  const count = (db: Db, name: string) => (quick ? db.collection(name).estimatedDocumentCount() : db.collection(name).countDocuments({}));
  const names = new Set(only ?? [...(await collectionNames(source)), ...(await collectionNames(target))]);
  // All at once: this runs while writes are refused.
  const counted = await Promise.all(
    [...names].map(async (name) => {
      const [a, b] = await Promise.all([count(source, name), count(target, name)]);
      return a === b ? null : { name, text: `${name} (${a} on the source, ${b} on the target)` };
    }),
  );
  return counted.filter((line) => line !== null);
}
