import { unviewed } from '../core/site-config.ts';
import type { Db, IndexDescription } from 'mongodb';
import type { IndexSpec } from '../core/feature.ts';
import { indexDescriptions } from '../core/first-write.ts';

export type { IndexSpec };

/**
 * One `createIndexes` command per collection, the collections in parallel (the platform database
 * at every start): as many round trips as the slowest collection, not one per index.
 */
export async function ensureIndexes(db: Db, specs: readonly IndexSpec[]): Promise<void> {
  await Promise.all([...byCollection(specs)].map(([collection, list]) => db.collection(collection).createIndexes(list)));
}

function byCollection(specs: readonly IndexSpec[]): Map<string, IndexDescription[]> {
  const map = new Map<string, IndexDescription[]>();
  for (const spec of specs) map.set(spec.collection, [...(map.get(spec.collection) ?? []), ...indexDescriptions([spec])]);
  return map;
}

/** The name MongoDB gives an index without one: `field_1_other_-1`, `title_text`. */
const indexName = (index: IndexDescription) =>
  index.name ??
  Object.entries(index.key as Record<string, unknown>)
    .map(([field, kind]) => `${field}_${kind}`)
    .join('_');

/** The options that make two indexes of the same name different indexes. */
const shape = (index: object) => {
  const i = index as Record<string, unknown>;
  return JSON.stringify([!!i.unique, i.expireAfterSeconds ?? null, i.partialFilterExpression ?? null, !!i.sparse]);
};

/** GridFS buckets' collections carry the driver's own indexes (`media_files.files`, `….chunks`). */
const driverOwned = (collection: string) => collection.endsWith('.files') || collection.endsWith('.chunks');

/**
 * The `indexes` step of the workspace actor (a release changed the specs): every collection the
 * database already has gets this release's declared indexes, and loses the ones no feature
 * declares any more (superseded or merged; an index whose options changed is dropped and made
 * again). Collections not made yet are left to their first write (`core/first-write.ts`).
 * Every index must be declared in a `Feature.indexes`: one made by hand would be dropped here.
 */
export async function upgradeIndexes(db: Db, specs: readonly IndexSpec[]): Promise<{ created: number; dropped: string[] }> {
  const declared = byCollection(specs);
  const collections = await db.listCollections({}, { nameOnly: true }).toArray();
  const dropped: string[] = [];
  let created = 0;
  for (const { name } of collections) {
    if (name.startsWith('system.') || driverOwned(name)) continue;
    const wanted = new Map((declared.get(name) ?? []).map((index) => [indexName(index), index]));
    const collection = unviewed(db).collection(name);
    for (const index of await collection.listIndexes().toArray()) {
      if (index.name === '_id_') continue;
      const want = wanted.get(index.name);
      if (want && shape(index) === shape(want) && JSON.stringify(index.key) === JSON.stringify(want.key)) continue;
      await collection.dropIndex(index.name);
      dropped.push(`${name}.${index.name}`);
    }
    if (wanted.size > 0) {
      await collection.createIndexes([...wanted.values()]);
      created += wanted.size;
    }
  }
  return { created, dropped };
}
