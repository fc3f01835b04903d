import { z } from 'zod';
import { NotFoundError } from '../core/errors.ts';
import { contentCollections } from '../content/model.ts';
import { decodeAfterId, pageOf } from '../core/paging.ts';
import { definePublicOperation } from '../public-read/runner.ts';
import { commentsCollection, type CommentDoc } from './model.ts';

/** What visitors see of a comment: never the e-mail address or IP. */
const PublicCommentView = z.object({
  id: z.string(),
  parentId: z.string().nullable(),
  authorName: z.string(),
  authorUrl: z.string().nullable(),
  byModerator: z.boolean(),
  body: z.string(),
  createdAt: z.string(),
});

const toPublic = (c: CommentDoc): z.infer<typeof PublicCommentView> => ({
  id: c._id,
  parentId: c.parentId,
  authorName: c.authorName,
  authorUrl: c.authorUrl,
  byModerator: c.moderatorUserId !== null,
  body: c.body,
  createdAt: c.createdAt.toISOString(),
});

export const publicListCommentsOp = definePublicOperation({
  id: 'public.comments.list',
  path: '/content/:slug/comments',
  summary: 'Approved comments of a published entry, oldest first (threads via parentId)',
  input: z.object({
    slug: z.string().min(1).max(200),
    locale: z.string().optional(),
    limit: z.coerce.number().int().min(1).max(100).default(50),
    cursor: z.string().max(500).optional(),
  }),
  output: z.object({ items: z.array(PublicCommentView), nextCursor: z.string().nullable(), total: z.number().int(), locale: z.string() }),
  async handler(ctx, input, view) {
    const entry = await contentCollections(ctx.db).entries.findOne({
      siteId: ctx.site._id,
      status: 'published',
      trashedAt: null,
      locale: view.locale,
      'live.slug': input.slug,
    });
    if (!entry) throw new NotFoundError();
    const list = `public-comments:${entry._id}`;
    const after = decodeAfterId(ctx, list, input.cursor);
    const filter = { siteId: ctx.site._id, entryId: entry._id, status: 'approved' as const, ...(after ? { _id: { $gt: after } } : {}) };
    const rows = await commentsCollection(ctx)
      .find(filter)
      .sort({ _id: 1 })
      .limit(input.limit + 1)
      .toArray();
    const { items, nextCursor } = pageOf(ctx, list, rows, input.limit);
    return { items: items.map(toPublic), nextCursor, total: items.length, locale: view.locale };
  },
});
