import type { Db } from 'mongodb';
import type { IndexSpec } from '../core/feature.ts';

export type { IndexSpec };

export async function ensureIndexes(db: Db, specs: readonly IndexSpec[]): Promise<void> {
  for (const spec of specs) {
    await db.collection(spec.collection).createIndex(spec.keys, spec.options ?? {});
  }
}
