import type { Collection, Document, Filter } from 'mongodb';

/**
 * How many documents a collection of a workspace database holds for one site, or for the whole
 * workspace (`siteId` null). Every document of a workspace database is the workspace's, so the
 * whole-workspace figure is the collection's own count (metadata, no scan), never a count over a
 * filter no index serves.
 */
export const siteCount = <T extends Document>(collection: Collection<T>, siteId: string | null): Promise<number> =>
  siteId ? collection.countDocuments({ siteId } as unknown as Filter<T>) : collection.estimatedDocumentCount();
