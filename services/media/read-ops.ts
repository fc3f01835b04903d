import { z } from 'zod';
import type { Filter } from 'mongodb';
import { defineOperation } from '../core/operation.ts';
import type { OperationContext } from '../core/context.ts';
import { NotFoundError } from '../core/errors.ts';
import { PageInfo, decodeAfterId, manageLimit, pageOf } from '../core/paging.ts';
import { MEDIA_SCOPE_FIELDS, MediaItemSchema, mediaItems, toMediaItem, type MediaDoc } from './model.ts';

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A stored (not trashed) item of this site that the caller's scope can see, or 404. */
export async function findVisible(ctx: OperationContext, id: string): Promise<MediaDoc> {
  const doc = await mediaItems(ctx).findOne(ctx.scope.filter<MediaDoc>({ _id: id, siteId: ctx.site._id, status: 'stored' }, MEDIA_SCOPE_FIELDS));
  if (!doc) throw new NotFoundError('Media item not found');
  return doc;
}

export const listMediaOp = defineOperation({
  id: 'media.list',
  surface: 'manage',
  method: 'GET',
  path: '/media',
  summary: 'List media items, newest first',
  requires: 'media:read',
  scope: MEDIA_SCOPE_FIELDS,
  input: z.object({
    limit: manageLimit,
    cursor: z.string().optional(),
    type: z
      .string()
      .regex(/^[a-z0-9.+-]+(\/[a-z0-9.+-]+)?$/, 'a MIME type (image/png) or its top-level part (image)')
      .optional()
      .describe('Filter by MIME type, or by its top-level part such as `image`'),
    search: z.string().min(1).max(200).optional().describe('Case-insensitive filename prefix'),
  }),
  output: z.object({
    data: z.array(MediaItemSchema),
    page: PageInfo,
  }),
  async handler(ctx, input) {
    const after = decodeAfterId(ctx, 'media', input.cursor);
    // `trashedAt: null` (true of every stored item) lets the trash's index serve the list's order too (feature.ts).
    const filter: Filter<MediaDoc> = { siteId: ctx.site._id, status: 'stored', trashedAt: null };
    if (after) filter._id = { $lt: after };
    if (input.type) filter.mimeType = input.type.includes('/') ? input.type : { $regex: `^${escapeRegex(input.type)}/` };
    if (input.search) filter.filenameLower = { $regex: `^${escapeRegex(input.search.toLowerCase())}` };
    const rows = await mediaItems(ctx)
      .find(ctx.scope.filter(filter, MEDIA_SCOPE_FIELDS))
      .sort({ _id: -1 })
      .limit(input.limit + 1)
      .toArray();
    const { items, nextCursor } = pageOf(ctx, 'media', rows, input.limit);
    return {
      data: items.map((doc) => toMediaItem(ctx, doc)),
      page: { limit: input.limit, cursor: input.cursor ?? null, nextCursor, total: items.length },
    };
  },
});

export const getMediaOp = defineOperation({
  id: 'media.get',
  surface: 'manage',
  method: 'GET',
  path: '/media/:id',
  summary: 'One media item',
  requires: 'media:read',
  scope: MEDIA_SCOPE_FIELDS,
  input: z.object({ id: z.string().min(1).max(64) }),
  output: MediaItemSchema,
  async handler(ctx, input) {
    return toMediaItem(ctx, await findVisible(ctx, input.id));
  },
});
