import { z } from 'zod';
import type { Collection, Document } from 'mongodb';
import { defineOperation } from '../core/operation.ts';
import { contentCollections, ENTRY_SCOPE, ENTRY_STATUSES } from '../content/model.ts';
import { mediaItems, MEDIA_SCOPE_FIELDS } from '../media/model.ts';
import { COMMENT_SCOPE, COMMENT_STATUSES, commentsCollection } from '../comments/model.ts';

const Counts = z.record(z.string(), z.number().int());

const AnalyticsView = z.object({
  generatedAt: z.string(),
  content: z.object({ total: z.number().int(), byStatus: Counts, byType: Counts, trashed: z.number().int() }),
  media: z.object({ count: z.number().int(), bytes: z.number(), trashed: z.number().int() }),
  comments: z.object({ total: z.number().int(), byStatus: Counts }),
});

async function countBy(collection: Collection<Document>, match: Document, field: string): Promise<Record<string, number>> {
  const rows = await collection.aggregate<{ _id: string; n: number }>([{ $match: match }, { $group: { _id: `$${field}`, n: { $sum: 1 } } }]).toArray();
  return Object.fromEntries(rows.map((r) => [String(r._id), r.n]));
}

/** Zero for every known value, so a client can chart the keys without checking for holes. */
const withZeros = (keys: readonly string[], counts: Record<string, number>) => ({ ...Object.fromEntries(keys.map((k) => [k, 0])), ...counts });
const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

export const analyticsSummaryOp = defineOperation({
  id: 'analytics.summary',
  surface: 'manage',
  method: 'GET',
  path: '/analytics',
  summary: 'Site summary: entries by status and type, media count and bytes, comments by status',
  description: 'Computed live from the site’s collections, within the key scope.',
  requires: 'analytics:read',
  scope: [ENTRY_SCOPE, MEDIA_SCOPE_FIELDS, COMMENT_SCOPE],
  input: z.object({}),
  output: AnalyticsView,
  async handler(ctx) {
    const siteId = ctx.site._id;
    const entries = contentCollections(ctx.db).entries as unknown as Collection<Document>;
    const media = mediaItems(ctx) as unknown as Collection<Document>;
    const comments = commentsCollection(ctx) as unknown as Collection<Document>;
    const entryScope = (filter: Document) => ctx.scope.filter({ ...filter, siteId }, ENTRY_SCOPE);
    // Counted live, not kept: the figures follow the key's scope (any type/locale/author subset),
    // which no kept counter could; an administrator's summary page (analytics:read), not a content path.
    const mediaScope = (filter: Document) => ctx.scope.filter({ ...filter, siteId }, MEDIA_SCOPE_FIELDS);
    const [byStatus, byType, trashed, mediaRows, mediaTrashed, commentStatus] = await Promise.all([
      countBy(entries, entryScope({ trashedAt: null }), 'status'),
      countBy(entries, entryScope({ trashedAt: null }), 'type'),
      entries.countDocuments(entryScope({ trashedAt: { $ne: null } })),
      media
        .aggregate<{ n: number; bytes: number }>([
          { $match: mediaScope({ status: 'stored' }) },
          { $group: { _id: null, n: { $sum: 1 }, bytes: { $sum: '$size' } } },
        ])
        .toArray(),
      media.countDocuments(mediaScope({ status: 'trashed' })),
      countBy(comments, ctx.scope.filter({ siteId }, COMMENT_SCOPE), 'status'),
    ]);
    return {
      generatedAt: ctx.services.clock.now().toISOString(),
      content: { total: sum(byStatus), byStatus: withZeros(ENTRY_STATUSES, byStatus), byType, trashed },
      media: { count: mediaRows[0]?.n ?? 0, bytes: mediaRows[0]?.bytes ?? 0, trashed: mediaTrashed },
      comments: { total: sum(commentStatus), byStatus: withZeros(COMMENT_STATUSES, commentStatus) },
    };
  },
});
