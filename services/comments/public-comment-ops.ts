import { z } from 'zod';
import { assertSwitch } from '../tenancy/quota-guard.ts';
import { defineOperation } from '../core/operation.ts';
import { BadRequestError, NotFoundError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { contentCollections } from '../content/model.ts';
import { loadLanguages, resolveLocale } from '../languages/languages.ts';
import { CommentText, commentsCollection, type CommentDoc } from './model.ts';
import { classify } from './rules.ts';

/** Visitors per IP per minute: enough for a person, too few for a spam script. */
export const PUBLIC_COMMENT_LIMIT_PER_MIN = 10;

export const publicCreateCommentOp = defineOperation({
  id: 'comments.submit',
  // Not on the read-only Public Content API: its own surface, switch (`api.commentsEnabled`) and document.
  surface: 'comments',
  method: 'POST',
  path: '/content/:slug/comments',
  summary: 'Leave a comment on a published entry (held for moderation)',
  description: `Anonymous; ${PUBLIC_COMMENT_LIMIT_PER_MIN} per minute per IP. The answer says \`approved\` or \`pending\`; a comment filed as spam also reads \`pending\`, so a spammer learns nothing.`,
  requires: 'public',
  status: 201,
  rateLimit: { perMinute: PUBLIC_COMMENT_LIMIT_PER_MIN, by: 'ip' },
  /** 403: comments switched off by the platform. */
  errors: [403],
  input: z.object({
    slug: z.string().min(1).max(200),
    locale: z.string().max(35).optional(),
    parentId: z.string().min(1).optional(),
    authorName: CommentText.authorName,
    authorEmail: CommentText.authorEmail,
    authorUrl: CommentText.authorUrl.optional(),
    body: CommentText.body,
  }),
  output: z.object({ id: z.string(), status: z.enum(['pending', 'approved']) }),
  async handler(ctx, input) {
    assertSwitch(ctx, 'comments');
    const locale = resolveLocale(await loadLanguages(ctx), input.locale);
    const entry = await contentCollections(ctx.db).entries.findOne({
      siteId: ctx.site._id,
      status: 'published',
      trashedAt: null,
      locale,
      'live.slug': input.slug,
    });
    if (!entry) throw new NotFoundError();
    if (input.parentId) {
      const parent = await commentsCollection(ctx).findOne({ siteId: ctx.site._id, _id: input.parentId, entryId: entry._id, status: 'approved' });
      if (!parent) throw new BadRequestError('parentId: no such approved comment on this entry');
    }
    const submission = {
      authorName: input.authorName,
      authorEmail: input.authorEmail,
      authorUrl: input.authorUrl ?? null,
      body: input.body,
      ip: ctx.request.ip,
    };
    const { status, reason } = await classify(ctx, submission);
    const now = ctx.services.clock.now();
    const doc: CommentDoc = {
      _id: newId(),
      siteId: ctx.site._id,
      entryId: entry._id,
      entryType: entry.type,
      entryLocale: entry.locale,
      entryAuthorId: entry.authorId,
      parentId: input.parentId ?? null,
      ...submission,
      moderatorUserId: null,
      status,
      reason,
      userAgent: ctx.request.userAgent ?? null,
      createdAt: now,
      updatedAt: now,
      version: 1,
    };
    await commentsCollection(ctx).insertOne(doc);
    return { id: doc._id, status: status === 'approved' ? ('approved' as const) : ('pending' as const) };
  },
});
