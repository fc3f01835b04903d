import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { ConflictError, NotFoundError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { actorUserId } from '../core/principal.ts';
import { accessCollections } from '../access/model.ts';
import { COMMENT_SCOPE, CommentText, CommentView, commentsCollection, toCommentView, type CommentDoc } from './model.ts';

export const replyOp = defineOperation({
  id: 'comments.reply',
  surface: 'manage',
  method: 'POST',
  path: '/comments/:id/reply',
  summary: 'Reply to a comment as moderator (approved at once; a pending parent is approved too)',
  requires: 'comments:moderate',
  scope: COMMENT_SCOPE,
  errors: [409],
  status: 201,
  input: z.object({ id: z.string(), body: CommentText.body, authorName: CommentText.authorName.optional() }),
  output: CommentView,
  async handler(ctx, { id, body, authorName }) {
    const filter = { siteId: ctx.site._id, _id: id };
    const parent = await commentsCollection(ctx).findOne(filter);
    if (!parent) throw new NotFoundError('Comment not found');
    ctx.scope.check(parent, COMMENT_SCOPE);
    if (parent.status === 'spam' || parent.status === 'trash') throw new ConflictError(`Cannot reply to a comment in ${parent.status}`);
    const now = ctx.services.clock.now();
    // Answering a held comment publishes the conversation, as moderators expect (WordPress does the same).
    if (parent.status === 'pending') {
      await commentsCollection(ctx).updateOne({ ...filter, status: 'pending' }, { $set: { status: 'approved', updatedAt: now }, $inc: { version: 1 } });
    }
    const userId = actorUserId(ctx.principal);
    const user = userId ? await accessCollections(ctx.db).users.findOne({ siteId: ctx.site._id, _id: userId }) : null;
    const doc: CommentDoc = {
      _id: newId(),
      siteId: ctx.site._id,
      entryId: parent.entryId,
      entryType: parent.entryType,
      entryLocale: parent.entryLocale,
      entryAuthorId: parent.entryAuthorId,
      parentId: parent._id,
      authorName: authorName ?? user?.name ?? 'Moderator',
      authorEmail: user?.email ?? null,
      authorUrl: null,
      moderatorUserId: userId ?? 'system',
      body,
      status: 'approved',
      reason: null,
      ip: null,
      userAgent: null,
      createdAt: now,
      updatedAt: now,
      version: 1,
    };
    await commentsCollection(ctx).insertOne(doc);
    return toCommentView(doc);
  },
});
