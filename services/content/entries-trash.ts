import { trashedAfter, type TrashKind } from '../core/feature.ts';
import { contentCollections, ENTRY_SCOPE, type EntryDoc } from './model.ts';
import { purgeEntry, restoreEntry } from './write-path.ts';

/**
 * Trashed entries stay in their collection with `trashedAt` set (and keep their slug reserved, so
 * a restore never collides). A restored entry comes back as a draft: restoring must not put
 * something on the public site by surprise.
 */
export const entryTrashKind: TrashKind = {
  kind: 'entry',
  async list(ctx, limit, mark) {
    const rows = await contentCollections(ctx.db)
      .entries.find(ctx.scope.filter<EntryDoc>({ siteId: ctx.site._id, trashedAt: { $ne: null }, ...trashedAfter(mark) }, ENTRY_SCOPE), {
        projection: { _id: 1, title: 1, trashedAt: 1 },
      })
      .sort({ trashedAt: -1, _id: -1 })
      .limit(limit)
      .toArray();
    return rows.map((r) => ({ kind: 'entry', id: r._id, title: r.title, trashedAt: r.trashedAt!.toISOString() }));
  },
  // Through the write path: scope, the entries quota, version, revision and `content.updated`.
  restore: (ctx, id) => restoreEntry(ctx, id),
  purge: (ctx, id) => purgeEntry(ctx, id),
};
