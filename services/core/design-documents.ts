/**
 * Where a site's design settings are stored (services/design/store.ts reads and writes them): one
 * collection, one document per site, kind and key. Here, on the ground floor, because the rule of
 * where an entry lives (core/permalinks.ts) is read from it by features below design (content's
 * public entries carry their path).
 */
export const DESIGN_COLLECTION = 'design_documents';

/** A design document's `_id`: `<siteId>:<kind>:<key>` (an upsert of the same item twice is a no-op). */
export const designDocId = (siteId: string, kind: string, key: string) => `${siteId}:${kind}:${key}`;
