import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';

/** Comment statuses (contract 3 leaves them open; docs/site-config.md lists the moves). */
export const COMMENT_STATUSES = ['pending', 'approved', 'spam', 'trash'] as const;
export const CommentStatusSchema = z.enum(COMMENT_STATUSES);
export type CommentStatus = z.infer<typeof CommentStatusSchema>;

/**
 * One comment on a content entry. The entry's type, locale and author are copied in at creation so
 * a scoped key's filter (type, locale, ownership) applies to comments without a join.
 */
export interface CommentDoc {
  _id: string;
  siteId: string;
  entryId: string;
  entryType: string;
  entryLocale: string;
  entryAuthorId: string | null;
  parentId: string | null;
  authorName: string;
  authorEmail: string | null;
  authorUrl: string | null;
  /** Set when a moderator wrote the comment (a reply); visitors have none. */
  moderatorUserId: string | null;
  body: string;
  status: CommentStatus;
  /** Why it was filed as spam or held (a spam term or rule), for the moderator. */
  reason: string | null;
  ip: string | null;
  userAgent: string | null;
  createdAt: Date;
  updatedAt: Date;
  version: number;
}

export const COMMENT_COLLECTIONS = {
  comments: 'comments',
  rules: 'comment_rules',
  spamTerms: 'comment_spam_terms',
} as const;

export const commentsCollection = (ctx: Pick<OperationContext, 'db'>) => ctx.db.collection<CommentDoc>(COMMENT_COLLECTIONS.comments);

/** Fields a key's scope restricts (via the owning entry). */
export const COMMENT_SCOPE = { type: 'entryType', locale: 'entryLocale', owner: 'entryAuthorId' } as const;

export const CommentView = z.object({
  id: z.string(),
  entryId: z.string(),
  parentId: z.string().nullable(),
  authorName: z.string(),
  authorEmail: z.string().nullable(),
  authorUrl: z.string().nullable(),
  byModerator: z.boolean(),
  body: z.string(),
  status: CommentStatusSchema,
  reason: z.string().nullable(),
  ip: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  version: z.number().int(),
});
export type CommentView = z.infer<typeof CommentView>;

export function toCommentView(doc: CommentDoc): CommentView {
  return {
    id: doc._id,
    entryId: doc.entryId,
    parentId: doc.parentId,
    authorName: doc.authorName,
    authorEmail: doc.authorEmail,
    authorUrl: doc.authorUrl,
    byModerator: doc.moderatorUserId !== null,
    body: doc.body,
    status: doc.status,
    reason: doc.reason,
    ip: doc.ip,
    createdAt: doc.createdAt.toISOString(),
    updatedAt: doc.updatedAt.toISOString(),
    version: doc.version,
  };
}

/** Visitor-supplied text fields, shared by the public form and the moderator's edit. */
export const CommentText = {
  authorName: z.string().trim().min(1).max(100),
  authorEmail: z.string().trim().toLowerCase().email().max(254),
  authorUrl: z
    .string()
    .trim()
    .url()
    .max(500)
    .refine((u) => /^https?:\/\//i.test(u), 'http or https URL only'),
  body: z.string().trim().min(1).max(10_000),
};
