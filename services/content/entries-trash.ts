import type { TrashKind } from '../core/feature.ts';
import type { OperationContext } from '../core/context.ts';
import { contentCollections, ENTRY_SCOPE, type EntryDoc } from './model.ts';
import { bumpContentGeneration } from '../public-read/state.ts';
import { cancelSchedule } from './schedule.ts';

async function findTrashed(ctx: OperationContext, id: string): Promise<EntryDoc | null> {
  const doc = await contentCollections(ctx.db).entries.findOne({ _id: id, siteId: ctx.site._id, trashedAt: { $ne: null } });
  if (doc) ctx.scope.check(doc, ENTRY_SCOPE);
  return doc;
}

/**
 * Trashed entries stay in their collection with `trashedAt` set (and keep their slug reserved, so
 * a restore never collides). A restored entry comes back as a draft: restoring must not put
 * something on the public site by surprise.
 */
export const entryTrashKind: TrashKind = {
  kind: 'entry',
  async list(ctx, limit) {
    const rows = await contentCollections(ctx.db)
      .entries.find(ctx.scope.filter<EntryDoc>({ siteId: ctx.site._id, trashedAt: { $ne: null } }, ENTRY_SCOPE), {
        projection: { _id: 1, title: 1, trashedAt: 1 },
      })
      .sort({ trashedAt: -1 })
      .limit(limit)
      .toArray();
    return rows.map((r) => ({ kind: 'entry', id: r._id, title: r.title, trashedAt: r.trashedAt!.toISOString() }));
  },
  async restore(ctx, id) {
    if (!(await findTrashed(ctx, id))) return false;
    const now = ctx.services.clock.now();
    const doc = await contentCollections(ctx.db).entries.findOneAndUpdate(
      { _id: id, siteId: ctx.site._id, trashedAt: { $ne: null } },
      { $set: { trashedAt: null, status: 'draft', live: null, publishedAt: null, schedule: null, updatedAt: now }, $inc: { version: 1 } },
      { returnDocument: 'after' },
    );
    if (!doc) return false;
    await ctx.emit('content.updated', { id, type: doc.type, slug: doc.slug, locale: doc.locale, status: doc.status, version: String(doc.version) });
    return true;
  },
  async purge(ctx, id) {
    if (!(await findTrashed(ctx, id))) return false;
    const { entries, revisions } = contentCollections(ctx.db);
    const result = await entries.deleteOne({ _id: id, siteId: ctx.site._id, trashedAt: { $ne: null } });
    if (result.deletedCount === 0) return false;
    await revisions.deleteMany({ siteId: ctx.site._id, entryId: id });
    await cancelSchedule(ctx, id).catch(() => undefined);
    await bumpContentGeneration(ctx);
    return true;
  },
};
