import type { Filter } from 'mongodb';
import { trashedAfter, type TrashKind } from '../core/feature.ts';
import type { OperationContext } from '../core/context.ts';
import { MEDIA_SCOPE_FIELDS, fileIdOf, mediaItems, type MediaDoc } from './model.ts';
import { deleteStoredBytes } from './ingest.ts';
import { releaseBytes } from './quota.ts';

const trashed = (ctx: OperationContext, id?: string): Filter<MediaDoc> =>
  ctx.scope.filter<MediaDoc>({ ...(id === undefined ? {} : { _id: id }), siteId: ctx.site._id, status: 'trashed' }, MEDIA_SCOPE_FIELDS);

/** Media in the trash: restore puts the item back; purge drops its bytes and frees its quota. */
export const mediaTrash: TrashKind = {
  kind: 'media',
  async list(ctx, limit, mark) {
    const docs = await mediaItems(ctx)
      .find({ ...trashed(ctx), ...trashedAfter(mark) })
      .sort({ trashedAt: -1, _id: -1 })
      .limit(limit)
      .toArray();
    return docs.map((doc) => ({ kind: 'media', id: doc._id, title: doc.filename, trashedAt: doc.trashedAt!.toISOString() }));
  },
  async restore(ctx, id) {
    const now = ctx.services.clock.now();
    const restored = await mediaItems(ctx).findOneAndUpdate(trashed(ctx, id), {
      $set: { status: 'stored', trashedAt: null, updatedAt: now },
      $inc: { version: 1 },
    });
    if (!restored) return false;
    await ctx.emit('media.restored', { id: restored._id, filename: restored.filename });
    return true;
  },
  async purge(ctx, id) {
    const doc = await mediaItems(ctx).findOne(trashed(ctx, id));
    if (!doc) return false;
    // Bytes first: if we stop halfway the item is still in the trash and a second purge finishes.
    // Only the caller whose delete removed the item gives its bytes back, so a double purge
    // cannot release twice.
    await deleteStoredBytes(ctx, fileIdOf(doc));
    const removed = await mediaItems(ctx).deleteOne(trashed(ctx, id));
    if (removed.deletedCount !== 1) return false;
    await releaseBytes(ctx, doc.size);
    return true;
  },
};
