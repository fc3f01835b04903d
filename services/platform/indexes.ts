import type { CreateIndexesOptions, Db, IndexSpecification } from 'mongodb';

/** An index a feature needs in every workspace database. Every key list should lead with `siteId`. */
export interface IndexSpec {
  collection: string;
  keys: IndexSpecification;
  options?: CreateIndexesOptions;
}

export async function ensureIndexes(db: Db, specs: readonly IndexSpec[]): Promise<void> {
  for (const spec of specs) {
    await db.collection(spec.collection).createIndex(spec.keys, spec.options ?? {});
  }
}
