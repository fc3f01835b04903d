import { z } from 'zod';
import type { Filter } from 'mongodb';
import { defineOperation } from '../core/operation.ts';
import { ConflictError, NotFoundError } from '../core/errors.ts';
import { decodeAfterId, manageLimit, pageEnvelope, pageOf } from '../core/paging.ts';
import { COMMENT_SCOPE, CommentStatusSchema, CommentText, CommentView, commentsCollection, toCommentView, type CommentDoc } from './model.ts';

/** Statuses given as `status=pending,spam`; without one the list shows the moderation view (pending + approved). */
const StatusList = z
  .string()
  .transform((s) =>
    s
      .split(',')
      .map((v) => v.trim())
      .filter(Boolean),
  )
  .pipe(z.array(CommentStatusSchema).min(1));

export const listCommentsOp = defineOperation({
  id: 'comments.list',
  surface: 'manage',
  method: 'GET',
  path: '/comments',
  summary: 'Comments by status, newest first',
  description: '`status` is one status or a comma-separated list; without it, pending and approved comments. `entryId` narrows to one entry.',
  requires: 'comments:moderate',
  scope: COMMENT_SCOPE,
  input: z.object({ status: StatusList.optional(), entryId: z.string().optional(), limit: manageLimit, cursor: z.string().max(500).optional() }),
  output: pageEnvelope(CommentView),
  async handler(ctx, query) {
    const filter: Filter<CommentDoc> = { siteId: ctx.site._id, status: { $in: query.status ?? ['pending', 'approved'] } };
    if (query.entryId) filter.entryId = query.entryId;
    const after = decodeAfterId(ctx, 'comments', query.cursor);
    if (after) filter._id = { $lt: after };
    const rows = await commentsCollection(ctx)
      .find(ctx.scope.filter(filter, COMMENT_SCOPE))
      .sort({ _id: -1 })
      .limit(query.limit + 1)
      .toArray();
    const { items, nextCursor } = pageOf(ctx, 'comments', rows, query.limit);
    return { data: items.map(toCommentView), page: { limit: query.limit, cursor: query.cursor ?? null, nextCursor, total: items.length } };
  },
});

export const bulkStatusOp = defineOperation({
  id: 'comments.bulkStatus',
  surface: 'manage',
  method: 'PATCH',
  path: '/comments',
  summary: 'Set the status of several comments',
  description: 'All ids must exist (404) and be within the key scope (401); otherwise nothing changes.',
  requires: 'comments:moderate',
  scope: COMMENT_SCOPE,
  input: z.object({ ids: z.array(z.string().min(1)).min(1).max(200), status: CommentStatusSchema }),
  output: z.object({ updated: z.number().int(), ids: z.array(z.string()) }),
  async handler(ctx, { ids, status }) {
    const unique = [...new Set(ids)];
    const filter = { siteId: ctx.site._id, _id: { $in: unique } };
    const found = await commentsCollection(ctx).find(filter).toArray();
    if (found.length !== unique.length) throw new NotFoundError('Comment not found');
    for (const doc of found) ctx.scope.check(doc, COMMENT_SCOPE);
    await commentsCollection(ctx).updateMany(filter, { $set: { status, updatedAt: ctx.services.clock.now() }, $inc: { version: 1 } });
    // Approved comments are public: cached public answers must not outlive a moderation.
    return { updated: unique.length, ids: unique };
  },
});

export const patchCommentOp = defineOperation({
  id: 'comments.update',
  surface: 'manage',
  method: 'PATCH',
  path: '/comments/:id',
  summary: 'Edit or re-status one comment',
  requires: 'comments:moderate',
  scope: COMMENT_SCOPE,
  input: z.object({
    id: z.string(),
    body: CommentText.body.optional(),
    authorName: CommentText.authorName.optional(),
    authorEmail: CommentText.authorEmail.nullable().optional(),
    authorUrl: CommentText.authorUrl.nullable().optional(),
    status: CommentStatusSchema.optional(),
    expectedVersion: z.number().int().min(0).optional(),
  }),
  output: CommentView,
  async handler(ctx, { id, expectedVersion, ...changes }) {
    const base = { siteId: ctx.site._id, _id: id };
    const current = await commentsCollection(ctx).findOne(base);
    if (!current) throw new NotFoundError('Comment not found');
    // Out of scope is the generic 401 (contract 5.4), as for entries.
    ctx.scope.check(current, COMMENT_SCOPE);
    const set = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined));
    const doc = await commentsCollection(ctx).findOneAndUpdate(
      expectedVersion === undefined ? base : { ...base, version: expectedVersion },
      { $set: { ...set, updatedAt: ctx.services.clock.now() }, $inc: { version: 1 } },
      { returnDocument: 'after' },
    );
    if (doc) {
      return toCommentView(doc);
    }
    if (expectedVersion !== undefined) throw new ConflictError('Version mismatch');
    throw new NotFoundError('Comment not found');
  },
});

export const purgeCommentsOp = defineOperation({
  id: 'comments.purge',
  surface: 'manage',
  method: 'DELETE',
  path: '/comments',
  summary: 'Permanently delete trashed comments (all, or the given `ids`)',
  description: 'Only comments in the trash are deleted; other ids are ignored. Replies to a deleted comment move up to its parent.',
  requires: 'comments:moderate',
  scope: COMMENT_SCOPE,
  input: z.object({
    ids: z
      .union([z.string(), z.array(z.string())])
      .transform((v) => (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter(Boolean))
      .pipe(z.array(z.string()).min(1).max(200))
      .optional(),
  }),
  output: z.object({ deleted: z.number().int(), ids: z.array(z.string()) }),
  async handler(ctx, { ids }) {
    const filter: Filter<CommentDoc> = { siteId: ctx.site._id, status: 'trash' };
    if (ids) filter._id = { $in: ids };
    const doomed = await commentsCollection(ctx)
      .find(ctx.scope.filter(filter, COMMENT_SCOPE), { projection: { _id: 1, parentId: 1 } })
      .limit(1000)
      .toArray();
    for (const c of doomed) {
      // Keep the thread readable: children of a removed comment hang from its parent instead. The
      // parent is read again because an earlier step of this loop may have moved it up already.
      const fresh = await commentsCollection(ctx).findOne({ siteId: ctx.site._id, _id: c._id }, { projection: { parentId: 1 } });
      await commentsCollection(ctx).updateMany({ siteId: ctx.site._id, parentId: c._id }, { $set: { parentId: fresh?.parentId ?? null } });
    }
    const removed = doomed.map((c) => c._id);
    if (removed.length) {
      await commentsCollection(ctx).deleteMany({ siteId: ctx.site._id, status: 'trash', _id: { $in: removed } });
    }
    return { deleted: removed.length, ids: removed };
  },
});
