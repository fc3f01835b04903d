import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { NotFoundError } from '../core/errors.ts';
import { decodeAfterId, pageOf } from '../content/paging.ts';
import { publicState } from '../content/public-state.ts';
import { PublicMediaItemSchema, mediaItems, toPublicMediaItem } from './model.ts';

export const listPublicMedia = defineOperation({
  id: 'media.publicList',
  surface: 'public',
  method: 'GET',
  path: '/media',
  summary: 'Media items of the site, newest first',
  requires: 'public',
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
  async handler(ctx, input) {
    // Same rule as every Public API route: switched off means 404, as if nothing were here.
    const state = await publicState(ctx);
    if (!state.publicEnabled) throw new NotFoundError();
    const after = decodeAfterId(ctx, 'public-media', input.cursor);
    const rows = await mediaItems(ctx)
      .find({ siteId: ctx.site._id, status: 'stored', ...(after ? { _id: { $lt: after } } : {}) })
      .sort({ _id: -1 })
      .limit(input.limit + 1)
      .toArray();
    const { items, nextCursor } = pageOf(ctx, 'public-media', rows, input.limit);
    return {
      items: items.map((doc) => toPublicMediaItem(ctx, doc)),
      nextCursor,
      total: items.length,
      locale: state.languages.defaultCode,
    };
  },
});
