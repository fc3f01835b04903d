import type { Db, IndexDescription } from 'mongodb';
import type { IndexSpec } from '../core/feature.ts';

export type { IndexSpec };

/**
 * One `createIndexes` command per collection, the collections in parallel: provisioning a workspace
 * costs as many round trips as the slowest collection, not one per index (41 one after another
 * made index creation most of a workspace's provisioning time).
 */
export async function ensureIndexes(db: Db, specs: readonly IndexSpec[]): Promise<void> {
  const byCollection = new Map<string, IndexSpec[]>();
  for (const spec of specs) byCollection.set(spec.collection, [...(byCollection.get(spec.collection) ?? []), spec]);
  await Promise.all(
    [...byCollection].map(([collection, list]) =>
      db.collection(collection).createIndexes(list.map((spec) => ({ ...spec.options, key: spec.keys }) as IndexDescription)),
    ),
  );
}
