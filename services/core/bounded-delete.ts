import type { Collection, Document, Filter } from 'mongodb';

/**
 * Deletes up to `budget` documents `filter` matches, `batch` at a time by `_id` (one indexed read
 * of ids, one delete by them), so a pass with much to remove holds neither a long command nor a
 * large list; what is left over is still matched by the next pass. Returns the documents deleted.
 */
export async function deleteInBatches<T extends Document & { _id: string }>(
  collection: Collection<T>,
  filter: Filter<T>,
  budget: number,
  batch = 500,
): Promise<number> {
  let deleted = 0;
  while (deleted < budget) {
    const size = Math.min(batch, budget - deleted);
    const ids = (
      await collection
        .find(filter, { projection: { _id: 1 } })
        .limit(size)
        .toArray()
    ).map((row) => row._id);
    if (ids.length === 0) break;
    deleted += (await collection.deleteMany({ _id: { $in: ids } } as Filter<T>)).deletedCount;
    if (ids.length < size) break;
  }
  return deleted;
}
