import { z } from 'zod';
import { decodeAfterId, pageOf } from '../core/paging.ts';
import { definePublicOperation } from '../public-read/runner.ts';
import { PublicMediaItemSchema, mediaItems, toPublicMediaItem } from './model.ts';

/**
 * Through the shared Public API runner: 404 while the Public API is switched off, and the
 * response cache (media writes bump the site's public generation, see `publicChanged`).
 */
export const listPublicMediaOp = definePublicOperation({
  id: 'public.media.list',
  path: '/media',
  summary: 'Media items of the site, newest first',
  input: z.object({
    limit: z.coerce.number().int().min(1).max(200).default(50),
    cursor: z.string().optional(),
  }),
  output: z.object({
    items: z.array(PublicMediaItemSchema),
    nextCursor: z.string().nullable(),
    total: z.number().int(),
    locale: z.string(),
  }),
  async handler(ctx, input, view) {
    const after = decodeAfterId(ctx, 'public-media', input.cursor);
    const rows = await mediaItems(ctx)
      .find({ siteId: ctx.site._id, status: 'stored', trashedAt: null, ...(after ? { _id: { $lt: after } } : {}) })
      .sort({ _id: -1 })
      .limit(input.limit + 1)
      .toArray();
    const { items, nextCursor } = pageOf(ctx, 'public-media', rows, input.limit);
    return { items: items.map((doc) => toPublicMediaItem(ctx, doc)), nextCursor, total: items.length, locale: view.locale };
  },
});
