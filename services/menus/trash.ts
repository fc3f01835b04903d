import { trashedAfter, type TrashKind } from '../core/feature.ts';
import { menusCollection } from './menus.ts';

/** Trashed menus keep their slug reserved, so restoring one never collides. */
export const menuTrashKind: TrashKind = {
  kind: 'menu',
  async list(ctx, limit, mark) {
    const rows = await menusCollection(ctx)
      .find({ siteId: ctx.site._id, trashedAt: { $ne: null }, ...trashedAfter(mark) })
      .sort({ trashedAt: -1, _id: -1 })
      .limit(limit)
      .toArray();
    return rows.map((m) => ({ kind: 'menu', id: m._id, title: m.name, trashedAt: m.trashedAt!.toISOString() }));
  },
  async restore(ctx, id) {
    const result = await menusCollection(ctx).updateOne(
      { _id: id, siteId: ctx.site._id, trashedAt: { $ne: null } },
      { $set: { trashedAt: null, updatedAt: ctx.services.clock.now() } },
    );
    if (result.modifiedCount === 0) return false;
    return true;
  },
  async purge(ctx, id) {
    const result = await menusCollection(ctx).deleteOne({ _id: id, siteId: ctx.site._id, trashedAt: { $ne: null } });
    return result.deletedCount > 0;
  },
};
