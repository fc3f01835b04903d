import { GridFSBucket, type Db } from 'mongodb';
import { siteOrigin } from '../tenancy/site-origin.ts';
import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';

/** Collections of the media feature in each workspace database (its byte counters are `site_state` documents, quota.ts). */
export const MEDIA_COLLECTIONS = {
  items: 'media',
} as const;

/** GridFS bucket holding the bytes (`media_files.files` / `media_files.chunks`); the file id is the item id. */
export const MEDIA_BUCKET = 'media_files';

export function mediaBucket(db: Db): GridFSBucket {
  return new GridFSBucket(db, { bucketName: MEDIA_BUCKET });
}

/** One stored file's metadata. The bytes sit in GridFS under `fileId` (the item's own `_id` until a replace). */
export interface MediaDoc {
  _id: string;
  /** The GridFS file holding the bytes now; absent until the first replace (then it is the `_id`). */
  fileId?: string;
  siteId: string;
  status: 'stored' | 'trashed';
  filename: string;
  /** Lower-case filename, for anchored prefix search. */
  filenameLower: string;
  mimeType: string;
  size: number;
  width: number | null;
  height: number | null;
  blurhash: string | null;
  altText: string | null;
  caption: string | null;
  focalX: number | null;
  focalY: number | null;
  uploadedBy: string | null;
  uploadedByKey: string | null;
  version: number;
  createdAt: Date;
  updatedAt: Date;
  trashedAt: Date | null;
}

/** The GridFS id of the item's current bytes (a replace stores new bytes under a new id). */
export const fileIdOf = (doc: Pick<MediaDoc, '_id' | 'fileId'>): string => doc.fileId ?? doc._id;

export function mediaItems(ctx: Pick<OperationContext, 'db'>) {
  return ctx.db.collection<MediaDoc>(MEDIA_COLLECTIONS.items);
}

/** Key scope of media: only the owner field applies (`ownOnly`). */
export const MEDIA_SCOPE_FIELDS = { owner: 'uploadedBy' } as const;

/** Where the bytes are served: on the site's origin (scheme and port rule: services/tenancy/site-origin.ts). */
export function fileUrl(ctx: Pick<OperationContext, 'site' | 'services'>, doc: Pick<MediaDoc, '_id' | 'fileId' | 'filename'>): string {
  const url = `${siteOrigin(ctx.services.config, ctx.site)}/media/files/${doc._id}/${encodeURIComponent(doc.filename)}`;
  // A replaced item's URL names its bytes, so a copy of the old ones cached under the old URL is never served for it.
  return doc.fileId ? `${url}?v=${doc.fileId}` : url;
}

export const MediaItemSchema = z.object({
  id: z.string(),
  filename: z.string(),
  mimeType: z.string(),
  url: z.string(),
  size: z.number().int(),
  width: z.number().int().nullable(),
  height: z.number().int().nullable(),
  blurhash: z.string().nullable(),
  altText: z.string().nullable(),
  caption: z.string().nullable(),
  focalX: z.number().nullable(),
  focalY: z.number().nullable(),
  status: z.enum(['stored', 'trashed']),
  uploadedBy: z.string().nullable(),
  version: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
  trashedAt: z.string().nullable(),
});
export type MediaItem = z.infer<typeof MediaItemSchema>;

export function toMediaItem(ctx: Pick<OperationContext, 'site' | 'services'>, doc: MediaDoc): MediaItem {
  return {
    id: doc._id,
    filename: doc.filename,
    mimeType: doc.mimeType,
    url: fileUrl(ctx, doc),
    size: doc.size,
    width: doc.width,
    height: doc.height,
    blurhash: doc.blurhash,
    altText: doc.altText,
    caption: doc.caption,
    focalX: doc.focalX,
    focalY: doc.focalY,
    status: doc.status,
    uploadedBy: doc.uploadedBy,
    version: doc.version,
    createdAt: doc.createdAt.toISOString(),
    updatedAt: doc.updatedAt.toISOString(),
    trashedAt: doc.trashedAt ? doc.trashedAt.toISOString() : null,
  };
}

/** What anonymous readers see: no uploader, no status, no internal version. */
export const PublicMediaItemSchema = MediaItemSchema.omit({ status: true, uploadedBy: true, version: true, trashedAt: true });
export type PublicMediaItem = z.infer<typeof PublicMediaItemSchema>;

export function toPublicMediaItem(ctx: Pick<OperationContext, 'site' | 'services'>, doc: MediaDoc): PublicMediaItem {
  const { status: _s, uploadedBy: _u, version: _v, trashedAt: _t, ...item } = toMediaItem(ctx, doc);
  return item;
}
