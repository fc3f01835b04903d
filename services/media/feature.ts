import type { Feature } from '../core/feature.ts';
import { MEDIA_COLLECTIONS } from './model.ts';
import { uploadMedia } from './upload-op.ts';
import { getMedia, listMedia } from './read-ops.ts';
import { deleteMedia, updateMedia } from './write-ops.ts';
import { listPublicMedia } from './public-ops.ts';
import { mediaTrash } from './trash.ts';

export const mediaFeature: Feature = {
  name: 'media',
  operations: [uploadMedia, listMedia, getMedia, updateMedia, deleteMedia, listPublicMedia],
  indexes: [
    // Lists: by site and status, newest first (ids are time-ordered).
    { collection: MEDIA_COLLECTIONS.items, keys: { siteId: 1, status: 1, _id: -1 } },
    { collection: MEDIA_COLLECTIONS.items, keys: { siteId: 1, status: 1, mimeType: 1, _id: -1 } },
    { collection: MEDIA_COLLECTIONS.items, keys: { siteId: 1, status: 1, filenameLower: 1 } },
    { collection: MEDIA_COLLECTIONS.items, keys: { siteId: 1, status: 1, trashedAt: -1 } },
  ],
  trash: [mediaTrash],
};
