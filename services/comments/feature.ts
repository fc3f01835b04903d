import type { Feature } from '../core/feature.ts';
import { bulkStatusOp, listCommentsOp, patchCommentOp, purgeCommentsOp } from './comments-ops.ts';
import { replyOp } from './reply-ops.ts';
import { publicCreateCommentOp } from './public-comment-ops.ts';
import { publicListCommentsOp } from './public-list-ops.ts';
import { ruleOperations } from './rules-ops.ts';
import { COMMENT_COLLECTIONS } from './model.ts';

export const commentsFeature: Feature = {
  name: 'comments',
  publicCollections: [COMMENT_COLLECTIONS.comments],
  operations: [listCommentsOp, bulkStatusOp, patchCommentOp, purgeCommentsOp, replyOp, publicCreateCommentOp, publicListCommentsOp, ...ruleOperations],
  indexes: [
    { collection: COMMENT_COLLECTIONS.comments, keys: { siteId: 1, status: 1, _id: -1 } },
    { collection: COMMENT_COLLECTIONS.comments, keys: { siteId: 1, entryId: 1, status: 1, _id: -1 } },
    // The moderation rules and spam terms are `site_config` kinds (core/site-config.ts), spam terms unique by term.
  ],
};
