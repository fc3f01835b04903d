import type { Feature } from '../core/feature.ts';
import { MEDIA_COLLECTIONS } from './model.ts';
import { replaceMediaOp, uploadMediaOp } from './upload-ops.ts';
import { getMediaOp, listMediaOp } from './read-ops.ts';
import { deleteMediaOp, updateMediaOp } from './write-ops.ts';
import { listPublicMediaOp } from './public-ops.ts';
import { mediaTrash } from './trash.ts';
import { siteCounterId, WORKSPACE_COUNTER_ID } from './quota.ts';
import { siteStateCollection } from '../core/site-state.ts';

export const mediaFeature: Feature = {
  name: 'media',
  publicCollections: [MEDIA_COLLECTIONS.items],
  operations: [uploadMediaOp, replaceMediaOp, listMediaOp, getMediaOp, updateMediaOp, deleteMediaOp, listPublicMediaOp],
  indexes: [
    // Lists: by site and status, newest first (ids are time-ordered).
    // One index for the library and the trash: the library binds `trashedAt: null` (its order is
    // `_id`), the trash sorts by `trashedAt` then `_id`. The type and filename filters ride along on
    // the library's order (a page stops when full).
    { collection: MEDIA_COLLECTIONS.items, keys: { siteId: 1, status: 1, trashedAt: -1, _id: -1 } },
  ],
  trash: [mediaTrash],
  /** Stored bytes, from the running counters the upload quota keeps (per site, and the workspace's). */
  async usage(services, workspace, siteId) {
    const counter = await siteStateCollection<{ _id: string; bytes: number }>(services.workspaceDb(workspace)).findOne({
      _id: siteId ? siteCounterId(siteId) : WORKSPACE_COUNTER_ID,
    });
    return { mediaBytes: counter?.bytes ?? 0 };
  },
};
