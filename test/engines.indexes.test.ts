// The local MongoDB engine answers queries from the indexes a collection declares (non-unique and
// compound ones too, engines/README.md): every query must give exactly what the same query gives
// on a copy of the data with no index (a full scan), before and after writes, and after a restart
// (the index is built again from the documents on the first query). Runs its own engine, built from this
// checkout, so it checks this launcher whatever engine the suite runs on.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MongoClient, ObjectId, type Collection, type Document, type Filter, type Sort } from 'mongodb';
import { ensureEngines, stopEngines } from '../scripts/engines.mjs';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engines-indexes-'));
const engine = { dataDir, mongoPort: 27517, temporal: false, log: () => undefined };

const INDEXES = [
  { siteId: 1, trashedAt: 1, _id: -1 },
  { siteId: 1, status: 1, locale: 1, _id: -1 },
  { siteId: 1, 'live.slug': 1 },
  { tags: 1 },
  { n: -1 },
  { score: 1, name: -1 },
  { locale: 1, tags: 1 },
  // A second key of many strings (as a search posting's entry id): the engine groups its entries by the first two.
  { siteId: 1, ref: 1, status: 1 },
] as const;

/** A seeded pseudo-random sequence: the same documents on every run. */
function random(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
}

function documents(count: number): Document[] {
  const next = random(24);
  const pick = <T>(values: readonly T[]) => values[Math.floor(next() * values.length)];
  const base = new Date('2026-01-01T00:00:00Z').getTime();
  return Array.from({ length: count }, (_, i) => {
    const doc: Document = {
      _id: new ObjectId(
        Math.floor(base / 1000 + i)
          .toString(16)
          .padStart(8, '0') + i.toString(16).padStart(16, '0'),
      ),
      siteId: pick(['s1', 's2', 's3']),
      status: pick(['draft', 'published', 'scheduled', 'archived']),
      locale: pick(['en', 'fr']),
      // Unique values of mixed types (int, double, string): a sort on n has no ties.
      n: i % 7 === 0 ? `m${String(i).padStart(5, '0')}` : i % 2 ? i : i + 0.5,
      score: pick([1, 2, 3, 3.0, null]),
      ref: `r${i}`,
    };
    const trashed = next();
    if (trashed < 0.2) doc.trashedAt = new Date(base + i * 1000);
    else if (trashed < 0.6) doc.trashedAt = null; // else: no field at all
    if (next() < 0.5) doc.live = { slug: `slug-${i % 50}` };
    if (next() < 0.4) doc.tags = pick([['a'], ['a', 'b'], ['c'], [], ['b', 'c', 'a']]);
    if (next() < 0.8) doc.name = `name-${Math.floor(next() * 300)}`;
    return doc;
  });
}

type Query = { filter: Filter<Document>; sort?: Sort; skip?: number; limit?: number; projection?: Document };

function queries(ids: ObjectId[]): Query[] {
  const mid = ids[Math.floor(ids.length / 2)];
  return [
    { filter: { siteId: 's1', trashedAt: null }, sort: { _id: -1 }, limit: 20 },
    { filter: { siteId: 's1', trashedAt: null, _id: { $lt: mid } }, sort: { _id: -1 }, limit: 20 },
    { filter: { siteId: 's1', trashedAt: null, _id: { $gte: mid } }, sort: { _id: 1 }, limit: 20 },
    { filter: { siteId: 's1', status: 'published', trashedAt: null, locale: 'en' }, sort: { _id: -1 }, limit: 20 },
    { filter: { siteId: 's1', status: 'published', trashedAt: null, locale: 'en', _id: { $lt: mid } }, sort: { _id: -1 }, limit: 20, skip: 3 },
    { filter: { siteId: 's2', status: { $in: ['draft', 'published'] }, locale: 'fr' }, sort: { _id: -1 }, limit: 15 },
    { filter: { siteId: 's2', status: { $in: ['draft', 'published'] }, locale: 'fr' } },
    // Several `$in`s: one scan per combination, merged in the sort's order (either direction).
    { filter: { siteId: { $in: ['s1', 's2'] }, status: { $in: ['draft', 'published'] }, locale: 'fr' }, sort: { _id: -1 }, limit: 15 },
    { filter: { siteId: { $in: ['s3', 's1'] }, status: { $in: ['archived', 'draft'] }, locale: { $in: ['en', 'fr'] } }, sort: { _id: 1 }, limit: 30 },
    { filter: { siteId: { $in: ['s1', 's3'] }, trashedAt: null, _id: { $gt: mid } }, sort: { _id: 1 }, limit: 20 },
    { filter: { siteId: { $in: ['s1', 's2'] }, status: { $in: ['draft', 'scheduled'] } } },
    { filter: { siteId: 's2', 'live.slug': 'slug-5' } },
    { filter: { siteId: 's2', 'live.slug': null } },
    { filter: { tags: 'a' } },
    { filter: { tags: { $in: ['a', 'c'] } }, sort: { _id: 1 } },
    { filter: { tags: { $size: 0 } } },
    { filter: { tags: null } },
    { filter: { locale: 'fr' }, sort: { _id: -1 }, limit: 40 },
    { filter: { locale: 'en', tags: { $gte: 'b' } } },
    { filter: { n: { $gt: 100, $lte: 500 } }, sort: { n: -1 } },
    { filter: { n: { $gte: 'm00100' } }, sort: { n: 1 }, limit: 30 },
    { filter: { n: { $lt: 50 } } },
    { filter: {}, sort: { n: 1 }, skip: 5, limit: 10 },
    { filter: {}, sort: { n: -1 }, limit: 10 },
    { filter: { score: 3 }, sort: { name: -1, _id: 1 } },
    { filter: { score: 3, name: { $gt: 'name-100' } }, sort: { name: 1, _id: 1 } },
    { filter: { score: null }, sort: { name: -1, _id: 1 } },
    { filter: { score: { $in: [1, 2] } }, sort: { name: 1, _id: 1 }, limit: 25 },
    { filter: { siteId: 's2', trashedAt: { $ne: null } }, sort: { _id: -1 } },
    // Lookups in the groups of the first two keys (site and ref fixed), and scans that are not.
    { filter: { siteId: 's1', ref: { $in: ['r1', 'r4', 'r7', 'r2001', 'r2999', 'r12000', 'none'] }, status: { $in: ['draft', 'published'] } } },
    { filter: { siteId: { $in: ['s2', 's3'] }, ref: { $in: ['r10', 'r11', 'r12', 'r13', 'r10100'] } }, projection: { siteId: 1, ref: 1, status: 1 } },
    { filter: { siteId: 's3', ref: 'r12', status: { $gte: 'a' } } },
    { filter: { siteId: { $in: ['s1', 's2', 's3'] }, ref: { $in: ['r2500', 'r2501', 'r2502'] } } },
    { filter: { siteId: 's1', ref: { $gte: 'r100', $lt: 'r101' } } },
    { filter: { _id: ids[7], siteId: ids.length ? 's1' : 's2', trashedAt: null } },
    { filter: { _id: { $in: ids.slice(0, 40) }, siteId: 's3' } },
    { filter: { $and: [{ siteId: 's1' }, { status: 'draft' }], locale: 'en' }, sort: { _id: -1 } },
    { filter: { siteId: 's1', trashedAt: null, $or: [{ status: 'draft' }, { locale: 'fr' }] }, sort: { _id: -1 }, limit: 5 },
    { filter: { siteId: 's3', status: { $exists: true }, locale: { $regex: '^f' } }, sort: { _id: -1 }, limit: 12 },
    // Projections of index keys only: answered from the index's entries (covered), a null or
    // missing key from the document; a field outside the index reads the documents.
    { filter: { siteId: 's1', status: 'published', locale: 'en' }, sort: { _id: -1 }, limit: 20, projection: { siteId: 1, locale: 1 } },
    { filter: { siteId: { $in: ['s1', 's3'] }, status: 'draft' }, sort: { _id: -1 }, projection: { _id: 0, status: 1, locale: 1 } },
    {
      filter: { siteId: 's2', status: { $in: ['draft', 'archived'] }, locale: 'fr', _id: { $lt: mid } },
      sort: { _id: 1 },
      limit: 25,
      projection: { _id: 1, status: 1 },
    },
    { filter: { score: { $in: [1, 2, null] } }, sort: { name: 1, _id: 1 }, limit: 40, projection: { _id: 1, score: 1, name: 1 } },
    { filter: { siteId: 's2', status: 'archived', locale: 'fr' }, sort: { _id: -1 }, projection: { n: 1, status: 1 } },
  ];
}

const run = (collection: Collection, q: Query) => {
  let cursor = collection.find(q.filter, q.projection ? { projection: q.projection } : {});
  if (q.sort) cursor = cursor.sort(q.sort);
  if (q.skip) cursor = cursor.skip(q.skip);
  if (q.limit) cursor = cursor.limit(q.limit);
  return cursor.toArray();
};

/** Ordered when the query sorts (its sorts have no ties), as a set of ids otherwise. */
async function same(plain: Collection, indexed: Collection, ids: ObjectId[]) {
  for (const q of queries(ids)) {
    const [expected, actual] = await Promise.all([run(plain, q), run(indexed, q)]);
    const shape = (docs: Document[]) => (q.sort ? docs : [...docs].sort((a, b) => String(a._id).localeCompare(String(b._id))));
    expect(shape(actual), JSON.stringify(q)).toEqual(shape(expected));
    expect(await indexed.countDocuments(q.filter), JSON.stringify(q)).toBe(await plain.countDocuments(q.filter));
  }
}

/** A document of every kind of `_id` the `_id` index is checked with. */
type IdDoc = { _id: string | ObjectId | number | { k: string }; v: number };

describe('local engine: secondary indexes', () => {
  let client: MongoClient;
  let plain: Collection;
  let indexed: Collection;
  const docs = documents(3000);
  const ids = docs.map((d) => d._id as ObjectId);

  const connect = async () => {
    const { mongoUri } = await ensureEngines(engine);
    client = await MongoClient.connect(mongoUri, { serverSelectionTimeoutMS: 5000 });
    plain = client.db('indexes').collection('plain');
    indexed = client.db('indexes').collection('indexed');
  };

  beforeAll(async () => {
    await connect();
    await indexed.createIndexes(INDEXES.map((key) => ({ key: { ...key } })));
    await plain.insertMany(docs.map((d) => ({ ...d })));
    await indexed.insertMany(docs.map((d) => ({ ...d })));
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await stopEngines({ dataDir });
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers every query as a full scan does', async () => {
    expect((await indexed.listIndexes().toArray()).length).toBe(INDEXES.length + 1);
    await same(plain, indexed, ids);
    // The engine built them on the first query and keeps them: one key per document (`n`), one per array element (`tags`).
    const { keysPerIndex } = await client.db('indexes').command({ validate: 'indexed' });
    expect(keysPerIndex).toMatchObject({ 'n_-1': docs.length, 'siteId_1_status_1_locale_1__id_-1': docs.length });
    expect(keysPerIndex.tags_1).toBeGreaterThan(docs.length);
  });

  it('keeps the answers after updates, deletes and inserts', async () => {
    const both = async (write: (c: Collection) => Promise<unknown>) => expect(await write(indexed)).toEqual(await write(plain));
    await both((c) => c.updateMany({ siteId: 's1', status: 'draft' }, { $set: { status: 'published', locale: 'fr' } }));
    await both((c) => c.updateMany({ tags: 'b' }, { $unset: { trashedAt: '' }, $push: { tags: 'z' } as Document }));
    await both((c) => c.updateMany({ n: { $lt: 300 } }, { $set: { trashedAt: new Date('2026-06-01T00:00:00Z') }, $inc: { score: 1 } }));
    await both((c) => c.updateOne({ _id: ids[11] }, { $set: { 'live.slug': 'moved', siteId: 's2' } }));
    await both((c) =>
      c.findOneAndUpdate({ siteId: 's2', status: 'published', locale: 'en' }, { $set: { status: 'archived' } }, { sort: { _id: -1 }, returnDocument: 'after' }),
    );
    await both((c) => c.deleteMany({ siteId: 's3', status: 'archived' }));
    await both((c) => c.findOneAndDelete({ siteId: 's1', trashedAt: null }, { sort: { _id: -1 } }));
    const added = documents(200).map((d, i) => ({ ...d, _id: new ObjectId(), n: 10_000 + i, ref: `r${10_000 + i}` }));
    await both((c) => c.insertMany(added.map((d) => ({ ...d }))));
    const upserted = new ObjectId();
    await both((c) => c.updateOne({ _id: upserted, siteId: 's9', 'live.slug': 'new' }, { $set: { status: 'draft' } }, { upsert: true }));
    await same(plain, indexed, ids);
  });

  it('answers scans that fix no group from a grouped index, whatever was written since it grouped its entries', async () => {
    // Grouped by site and ref (many strings): the list of every entry is dropped until a scan needs it.
    type Row = { _id: string; siteId: string; ref: string | number; status: string };
    const [groupedPlain, grouped] = ['lazyplain', 'lazyindexed'].map((name) => client.db('indexes').collection<Row>(name));
    await grouped.createIndex({ siteId: 1, ref: 1, status: 1 });
    const rows = Array.from({ length: 1500 }, (_, i) => ({ _id: `d${i}`, siteId: `s${i % 2}`, ref: `r${i}`, status: i % 3 ? 'a' : 'b' }));
    const both = async (write: (c: Collection<Row>) => Promise<unknown>) => expect(await write(grouped)).toEqual(await write(groupedPlain));
    await both((c) => c.insertMany(rows.map((row) => ({ ...row }))));
    const compare = async (filter: Filter<Row>, sort: Sort = { siteId: 1, ref: 1, status: 1, _id: 1 }) =>
      expect(await grouped.find(filter).sort(sort).toArray(), JSON.stringify(filter)).toEqual(await groupedPlain.find(filter).sort(sort).toArray());
    // A lookup by group (the index is built and groups its entries), then writes while no list of all is kept.
    await compare({ siteId: 's1', ref: { $in: ['r1', 'r3', 'r1001'] } });
    await both((c) => c.deleteMany({ siteId: 's0', ref: { $in: ['r0', 'r2', 'r4'] } }));
    await both((c) => c.updateOne({ _id: 'd7' }, { $set: { status: 'c' } }));
    // An entry no group can hold (a number as ref): the list of every entry comes back with it.
    await both((c) => c.insertOne({ _id: 'n1', siteId: 's1', ref: 42, status: 'a' }));
    await compare({ siteId: 's1' });
    await compare({ siteId: { $gte: 's0' }, ref: { $gte: 'r14', $lt: 'r15' } });
    await compare({ siteId: 's1', ref: 42 });
    // Kept by the writes after it, as the groups are.
    await both((c) => c.deleteMany({ siteId: 's1', ref: { $in: ['r1', 42] } }));
    await both((c) => c.insertOne({ _id: 'd9999', siteId: 's0', ref: 'r9999', status: 'b' }));
    await compare({ siteId: 's0', status: { $exists: true } });
    await compare({ siteId: 's1', ref: 'r3' });
    expect(await grouped.countDocuments({ siteId: { $in: ['s0', 's1'] } })).toBe(await groupedPlain.countDocuments({}));
  });

  it('keeps `_id` unique for every kind of id: strings and ObjectIds by the data itself, others as MongoDB compares them', { timeout: 120_000 }, async () => {
    const collection = () => client.db('indexes').collection<IdDoc>('ids');
    let ids = collection();
    const oid = new ObjectId();
    await ids.insertMany([
      { _id: 'a', v: 1 },
      { _id: 'b', v: 2 },
      { _id: oid, v: 3 },
      { _id: 1, v: 4 },
      { _id: { k: 'x' }, v: 5 },
    ]);
    const refused = async (doc: IdDoc) => {
      const error = (await ids.insertOne(doc).catch((e: unknown) => e)) as { code?: number; message?: string };
      expect(error.code, JSON.stringify(doc)).toBe(11000);
      expect(error.message).toContain('index: _id_ dup key');
    };
    const all = async () => (await ids.find({}).toArray()).map((d) => d.v).sort();
    const check = async () => {
      for (const doc of [
        { _id: 'a', v: 9 },
        { _id: new ObjectId(oid.toHexString()), v: 9 },
        { _id: 1.0, v: 9 },
        { _id: { k: 'x' }, v: 9 },
      ])
        await refused(doc);
      expect(await all()).toEqual([1, 2, 3, 4, 5]);
      expect((await ids.findOne({ _id: 'b' }))?.v).toBe(2);
      expect((await ids.findOne({ _id: oid }))?.v).toBe(3);
      expect((await ids.findOne({ _id: 1 }))?.v).toBe(4);
      expect((await ids.find({ _id: { $in: ['a', oid, 'zz'] } }).toArray()).map((d) => d.v).sort()).toEqual([1, 3]);
      expect((await ids.find({ _id: /^[ab]$/ }).toArray()).map((d) => d.v).sort()).toEqual([1, 2]);
      expect((await ids.find({ _id: { $gte: 'b' } }).toArray()).map((d) => d.v)).toEqual([2]);
    };
    await check();
    // A deleted id can be used again; an upsert on an existing id updates it.
    await ids.deleteOne({ _id: 'b' });
    expect(await ids.findOne({ _id: 'b' })).toBeNull();
    await ids.insertOne({ _id: 'b', v: 2 });
    await ids.updateOne({ _id: 'a' }, { $set: { v: 1 } }, { upsert: true });
    const { keysPerIndex } = await client.db('indexes').command({ validate: 'ids' });
    expect(keysPerIndex._id_).toBe(5);
    // The same after a restart (the data map is the file's).
    await client.close();
    await stopEngines({ dataDir });
    await connect();
    ids = collection();
    await check();
    await ids.drop();
  });

  it('reads, updates and deletes by a long list of ids exactly what the list names (duplicates and missing ids included)', { timeout: 120_000 }, async () => {
    // Lists this long are a gateway's acknowledgement of a backlog of changes (core/change-feed.ts):
    // the engine answers those of strings and ObjectIds by `_id` lookups, not by matching each
    // document against the whole list; numbers still go through the library's matcher. One kind
    // of id per collection, as the service writes them.
    type Row = { _id: string | ObjectId | number; v: number; acked?: string[] };
    const kinds: Array<[string, (i: number) => Row['_id'], number]> = [
      ['strings', (i) => `id-${i}`, 1500],
      ['objectids', () => new ObjectId(), 1500],
      ['numbers', (i) => i, 300],
    ];
    const values = (found: Row[]) => found.map((doc) => doc.v).sort((a, b) => a - b);
    for (const [kind, idOf, count] of kinds) {
      const rows = client.db('indexes').collection<Row>(`idlist_${kind}`);
      const docs: Row[] = Array.from({ length: count }, (_, v) => ({ _id: idOf(v), v }));
      await rows.insertMany(docs);
      const named = docs.filter((doc) => doc.v % 2 === 0);
      const list = [...named.map((doc) => doc._id), ...named.slice(0, 50).map((doc) => doc._id), idOf(count + 1)];
      const marked = await rows.updateMany({ _id: { $in: list } }, { $addToSet: { acked: 'g' } });
      expect([marked.matchedCount, marked.modifiedCount], kind).toEqual([named.length, named.length]);
      const again = await rows.updateMany({ _id: { $in: list } }, { $addToSet: { acked: 'g' } });
      expect([again.matchedCount, again.modifiedCount], kind).toEqual([named.length, 0]);
      expect(values(await rows.find({ acked: 'g' }).toArray()), kind).toEqual(values(named));
      expect(values(await rows.find({ _id: { $in: list }, v: { $gte: count / 2 } }).toArray()), kind).toEqual(
        values(named.filter((doc) => doc.v >= count / 2)),
      );
      // Two lists, one inside `$and`: both hold, whichever the lookups were made from.
      const [a, b, c] = named.map((doc) => doc._id);
      for (const filter of [
        { $and: [{ _id: { $in: [a, b] } }], _id: { $in: [a, c] } },
        { _id: { $in: [a, c] }, $and: [{ _id: { $in: [a, b] } }] },
      ] as Filter<Row>[])
        expect(values(await rows.find(filter).toArray()), kind).toEqual([0]);
      expect((await rows.deleteMany({ _id: { $in: list } })).deletedCount, kind).toBe(named.length);
      expect(values(await rows.find({}).toArray()), kind).toEqual(values(docs.filter((doc) => doc.v % 2 === 1)));
      await rows.drop();
    }
  });

  it('builds the indexes again after a restart, in the background, with the documents written meanwhile', { timeout: 120_000 }, async () => {
    await client.close();
    await stopEngines({ dataDir });
    await connect();
    // Written while the startup build may still run: before it reaches the collection, or after.
    for (const c of [plain, indexed]) await c.updateMany({ siteId: 's2', locale: 'fr' }, { $set: { locale: 'de', tags: ['d'] } });
    const log = path.join(dataDir, 'mongo.log');
    for (let waited = 0; !fs.readFileSync(log, 'utf8').includes('mongo-launcher: indexes built'); waited += 100) {
      if (waited > 60_000) throw new Error('the engine did not report its startup index build');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await same(plain, indexed, ids);
  });

  it('builds an index declared on a collection that already has documents when it is declared', async () => {
    const [late, scanned] = ['late', 'late_plain'].map((name) => client.db('indexes').collection(name));
    for (const c of [late, scanned]) await c.insertMany(docs.slice(0, 500).map((d) => ({ ...d })));
    await late.createIndex({ siteId: 1, status: 1, _id: -1 });
    // Filled by the createIndexes itself, before any query.
    const { keysPerIndex } = await client.db('indexes').command({ validate: 'late' });
    expect(keysPerIndex['siteId_1_status_1__id_-1']).toBe(500);
    const q: Query = { filter: { siteId: 's1', status: { $in: ['draft', 'published'] } }, sort: { _id: -1 }, limit: 10 };
    expect(await run(late, q)).toEqual(await run(scanned, q));
  });
});
