import { MEDIA_SCOPE_FIELDS } from './model.ts';
import { z } from 'zod';
import { Readable } from 'node:stream';
import { defineOperation } from '../core/operation.ts';
import { BadRequestError, ConflictError } from '../core/errors.ts';
import { actorKeyId, actorUserId } from '../core/principal.ts';
import { MediaItemSchema, fileIdOf, mediaItems, toMediaItem, type MediaDoc } from './model.ts';
import { findVisible } from './read-ops.ts';
import { mediaLimits } from './limits.ts';
import { deleteStoredBytes, ingest, type IncomingFile } from './ingest.ts';
import { describeImage } from './image.ts';
import { releaseBytes } from './quota.ts';

const isIncomingFile = (value: unknown): value is IncomingFile =>
  typeof value === 'object' && value !== null && (value as IncomingFile).stream instanceof Readable;

export const uploadMediaOp = defineOperation({
  id: 'media.upload',
  surface: 'manage',
  method: 'POST',
  path: '/media',
  summary: 'Upload a file to the media library (multipart field `file`)',
  description: "The type is detected from the bytes and checked against the site's allowed list; 413 over the size limit or the library quota.",
  requires: 'media:upload',
  scope: MEDIA_SCOPE_FIELDS,
  input: z.object({
    file: z.custom<IncomingFile>(isIncomingFile, { message: 'Expected a file' }).optional(),
  }),
  output: MediaItemSchema,
  status: 201,
  events: ['media.uploaded'],
  heavy: true,
  body: 'multipart',
  hiddenFromTools: true,
  async handler(ctx, input) {
    if (!input.file) throw new BadRequestError('No file: send multipart/form-data with a file field');
    const stored = await ingest(ctx, input.file, mediaLimits(ctx));
    const now = ctx.services.clock.now();
    let doc: MediaDoc;
    try {
      const image = await describeImage(ctx.db, stored.id, stored.mimeType, stored.size, stored.head);
      doc = {
        _id: stored.id,
        siteId: ctx.site._id,
        status: 'stored',
        filename: stored.filename,
        filenameLower: stored.filename.toLowerCase(),
        mimeType: stored.mimeType,
        size: stored.size,
        ...image,
        altText: null,
        caption: null,
        focalX: null,
        focalY: null,
        uploadedBy: actorUserId(ctx.principal),
        uploadedByKey: actorKeyId(ctx.principal),
        version: 1,
        createdAt: now,
        updatedAt: now,
        trashedAt: null,
      };
      await mediaItems(ctx).insertOne(doc);
    } catch (error) {
      // The bytes are stored but no item points at them: drop them and give the quota back.
      await deleteStoredBytes(ctx, stored.id);
      await releaseBytes(ctx, stored.size);
      throw error;
    }
    const item = toMediaItem(ctx, doc);
    await ctx.emit('media.uploaded', { id: item.id, filename: item.filename, mimeType: item.mimeType, size: item.size, url: item.url });
    return item;
  },
});

export const replaceMediaOp = defineOperation({
  id: 'media.replace',
  surface: 'manage',
  method: 'POST',
  path: '/media/:id/file',
  summary: 'Replace the file of a media item (multipart field `file`); the id, alt text and uses stay',
  description:
    'The new bytes are checked like an upload and stored first; the item then points at them and the old bytes are dropped. ' +
    'Its URL changes (`?v=`), so no cache serves the old file for it. 409 when the item changed during the upload.',
  requires: 'media:upload',
  scope: MEDIA_SCOPE_FIELDS,
  input: z.object({
    id: z.string().min(1).max(64),
    file: z.custom<IncomingFile>(isIncomingFile, { message: 'Expected a file' }).optional(),
  }),
  output: MediaItemSchema,
  events: ['media.replaced'],
  heavy: true,
  body: 'multipart',
  hiddenFromTools: true,
  async handler(ctx, input) {
    if (!input.file) throw new BadRequestError('No file: send multipart/form-data with a file field');
    const current = await findVisible(ctx, input.id);
    ctx.scope.check(current, MEDIA_SCOPE_FIELDS);
    const stored = await ingest(ctx, input.file, mediaLimits(ctx));
    let updated: MediaDoc | null;
    try {
      const image = await describeImage(ctx.db, stored.id, stored.mimeType, stored.size, stored.head);
      // Filtered on the version read: a replace or delete that landed meanwhile wins, and these bytes go.
      updated = await mediaItems(ctx).findOneAndUpdate(
        { _id: current._id, siteId: ctx.site._id, status: 'stored', version: current.version },
        {
          $set: {
            fileId: stored.id,
            filename: stored.filename,
            filenameLower: stored.filename.toLowerCase(),
            mimeType: stored.mimeType,
            size: stored.size,
            ...image,
            updatedAt: ctx.services.clock.now(),
          },
          $inc: { version: 1 },
        },
        { returnDocument: 'after' },
      );
      if (!updated) throw new ConflictError('The media item changed during the upload; try again');
    } catch (error) {
      await deleteStoredBytes(ctx, stored.id);
      await releaseBytes(ctx, stored.size);
      throw error;
    }
    // The item no longer points at the old bytes: drop them and give their bytes back.
    await deleteStoredBytes(ctx, fileIdOf(current));
    await releaseBytes(ctx, current.size);
    const item = toMediaItem(ctx, updated);
    await ctx.emit('media.replaced', { id: item.id, filename: item.filename, mimeType: item.mimeType, size: item.size, url: item.url });
    return item;
  },
});
