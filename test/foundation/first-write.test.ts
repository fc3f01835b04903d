import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MongoClient, type Db } from 'mongodb';
import { createFirstWriteSetup } from '../../services/core/first-write.ts';
import { upgradeIndexes, type IndexSpec } from '../../services/tenancy/indexes.ts';

/**
 * The one rule for collections (issue 24): made with their declared indexes at their first write,
 * never by a read; and the index upgrade drops what no spec declares any more.
 */
let client: MongoClient;
let raw: Db;
const specs: IndexSpec[] = [
  { collection: 'probe_things', keys: { siteId: 1, slug: 1 }, options: { unique: true } },
  { collection: 'probe_things', keys: { siteId: 1, at: -1 } },
];

beforeAll(async () => {
  client = await new MongoClient(process.env.MONGODB_URI!).connect();
  raw = client.db(`t${randomBytes(4).toString('hex')}_first_write`);
});
afterAll(async () => {
  await raw?.dropDatabase();
  await client?.close();
});

const collections = async () => (await raw.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).sort();
const indexNames = async (name: string) => (await raw.collection(name).indexes()).map((index) => index.name).sort();

describe('collections made on first write', () => {
  it('a read makes nothing; the first write makes the collection with its declared indexes, unique ones holding from the first document', async () => {
    const db = createFirstWriteSetup(specs).wrap(raw);
    expect(await db.collection('probe_things').findOne({ siteId: 's' })).toBeNull();
    expect(await db.collection('probe_things').countDocuments({ siteId: 's' })).toBe(0);
    expect(await collections()).toEqual([]);

    // Two first writes at once, same unique key: one wins, the other is refused.
    const results = await Promise.allSettled([
      db.collection('probe_things').insertOne({ siteId: 's', slug: 'a' }),
      db.collection('probe_things').insertOne({ siteId: 's', slug: 'a' }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(await indexNames('probe_things')).toEqual(['_id_', 'siteId_1_at_-1', 'siteId_1_slug_1']);
    // A collection without declared indexes is left to MongoDB (made by the insert itself).
    await db.collection('probe_plain').updateOne({ _id: 'x' } as never, { $set: { n: 1 } }, { upsert: true });
    expect(await indexNames('probe_plain')).toEqual(['_id_']);
  });

  it('the upgrade gives existing collections their declared indexes, drops superseded ones, and leaves unmade ones alone', async () => {
    await raw.collection('probe_things').createIndex({ siteId: 1, retired: 1 });
    await raw.collection('probe_things').dropIndex('siteId_1_at_-1');
    const { dropped } = await upgradeIndexes(raw, [...specs, { collection: 'probe_unmade', keys: { siteId: 1 } }]);
    expect(dropped).toEqual(['probe_things.siteId_1_retired_1']);
    expect(await indexNames('probe_things')).toEqual(['_id_', 'siteId_1_at_-1', 'siteId_1_slug_1']);
    expect(await collections()).not.toContain('probe_unmade');
  });
});
