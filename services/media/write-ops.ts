import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { BadRequestError, NotFoundError } from '../core/errors.ts';
import { MEDIA_SCOPE_FIELDS, MediaItemSchema, mediaItems, toMediaItem } from './model.ts';
import { findVisible } from './read-ops.ts';

const focal = z.number().min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1').nullable();

export const updateMediaOp = defineOperation({
  id: 'media.update',
  surface: 'manage',
  method: 'PATCH',
  path: '/media/:id',
  summary: 'Change alt text, caption or focal point',
  requires: 'media:upload',
  scope: MEDIA_SCOPE_FIELDS,
  input: z
    .object({
      id: z.string().min(1).max(64),
      altText: z.string().max(1000).nullable().optional(),
      caption: z.string().max(5000).nullable().optional(),
      focalX: focal.optional().describe('Horizontal focal point, 0 (left) to 1 (right), or null'),
      focalY: focal.optional().describe('Vertical focal point, 0 (top) to 1 (bottom), or null'),
    })
    .strict(),
  output: MediaItemSchema,
  async handler(ctx, input) {
    const { id, ...changes } = input;
    const set = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
    if (Object.keys(set).length === 0) throw new BadRequestError('Nothing to change: send altText, caption, focalX or focalY');
    const current = await findVisible(ctx, id);
    ctx.scope.check(current, MEDIA_SCOPE_FIELDS);
    const updated = await mediaItems(ctx).findOneAndUpdate(
      { _id: id, siteId: ctx.site._id, status: 'stored' },
      { $set: { ...set, updatedAt: ctx.services.clock.now() }, $inc: { version: 1 } },
      { returnDocument: 'after' },
    );
    if (!updated) throw new NotFoundError('Media item not found');
    return toMediaItem(ctx, updated);
  },
});

export const deleteMediaOp = defineOperation({
  id: 'media.delete',
  surface: 'manage',
  method: 'DELETE',
  path: '/media/:id',
  summary: 'Move a media item to the trash (restore or purge through /trash)',
  requires: 'media:delete',
  scope: MEDIA_SCOPE_FIELDS,
  input: z.object({ id: z.string().min(1).max(64) }),
  output: MediaItemSchema,
  events: ['media.deleted'],
  async handler(ctx, input) {
    const current = await findVisible(ctx, input.id);
    ctx.scope.check(current, MEDIA_SCOPE_FIELDS);
    const now = ctx.services.clock.now();
    const trashed = await mediaItems(ctx).findOneAndUpdate(
      { _id: input.id, siteId: ctx.site._id, status: 'stored' },
      { $set: { status: 'trashed', trashedAt: now, updatedAt: now }, $inc: { version: 1 } },
      { returnDocument: 'after' },
    );
    if (!trashed) throw new NotFoundError('Media item not found');
    await ctx.emit('media.deleted', { id: trashed._id, filename: trashed.filename });
    return toMediaItem(ctx, trashed);
  },
});
