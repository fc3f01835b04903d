import { z } from 'zod';
import type { Filter } from 'mongodb';
import type { OperationContext } from '../core/context.ts';
import { NotFoundError } from '../core/errors.ts';
import { contentCollections, type EntryDoc } from './model.ts';
import { PublicEntryView, toPublicEntry } from './entry-view.ts';
import { decodeAfterId, orderedPageEnd, pageInOrder, pageOf } from '../core/paging.ts';
import { entriesInOrder, rankEntries } from './search-query.ts';
import { definePublicOperation, type PublicView } from '../public-read/runner.ts';
import { ContentTypeView, listContentTypes } from './content-types.ts';
import { publicPlacer } from './entry-paths.ts';

const publicLimit = z.coerce.number().int().min(1).max(100).default(20);
const PublicList = z.object({ items: z.array(PublicEntryView), nextCursor: z.string().nullable(), total: z.number().int(), locale: z.string() });

/** Published entries of the resolved locale; the slug is the published one (or the working one in a preview). */
function publishedFilter(ctx: OperationContext, view: PublicView, extra: { type?: string; slug?: string }): Filter<EntryDoc> {
  const filter: Filter<EntryDoc> = { siteId: ctx.site._id, status: 'published', trashedAt: null, locale: view.locale };
  if (extra.type) filter.type = extra.type;
  if (extra.slug) filter[view.preview ? 'slug' : 'live.slug'] = extra.slug;
  return filter;
}

/**
 * What a public answer shows of a published entry (toPublicEntry, pathFactsOf): its snapshot and
 * facts, not its working revision, which is about half of the document: a page of 100 costs the
 * engine, the driver and the gateway that much less to encode, decode and copy.
 */
const PUBLISHED_FIELDS = { _id: 1, siteId: 1, type: 1, locale: 1, status: 1, terms: 1, publishedAt: 1, updatedAt: 1, authorId: 1, live: 1 } as const;

/**
 * A published entry always holds its snapshot; one read with `PUBLISHED_FIELDS` that does not
 * (written around the write path) is shown from its working revision, read whole.
 */
async function wholeWhereBare(ctx: OperationContext, rows: EntryDoc[]): Promise<EntryDoc[]> {
  const bare = rows.filter((row) => !row.live).map((row) => row._id);
  if (bare.length === 0) return rows;
  const { entries } = contentCollections(ctx.db);
  const whole = new Map((await entries.find({ _id: { $in: bare }, siteId: ctx.site._id }).toArray()).map((doc) => [doc._id, doc]));
  return rows.map((row) => whole.get(row._id) ?? row);
}

async function page(ctx: OperationContext, view: PublicView, list: string, filter: Filter<EntryDoc>, limit: number, cursor?: string) {
  const after = decodeAfterId(ctx, list, cursor);
  if (after) filter._id = { $lt: after };
  // A preview shows the working revision: the whole document.
  const rows = await wholeWhereBare(
    ctx,
    (await contentCollections(ctx.db)
      .entries.find(filter, view.preview ? {} : { projection: PUBLISHED_FIELDS })
      .sort({ _id: -1 })
      .limit(limit + 1)
      .toArray()) as EntryDoc[],
  );
  const { items, nextCursor } = pageOf(ctx, list, rows, limit);
  const pathOf = await publicPlacer(ctx, items, view);
  return { items: items.map((doc) => toPublicEntry(doc, view.preview, pathOf(doc))), nextCursor, total: items.length, locale: view.locale };
}

export const publicListContentOp = definePublicOperation({
  id: 'public.content.list',
  path: '/content',
  summary: 'Published content, newest first',
  input: z.object({
    type: z.string().optional(),
    slug: z.string().optional(),
    locale: z.string().optional(),
    limit: publicLimit,
    cursor: z.string().optional(),
  }),
  output: PublicList,
  async handler(ctx, input, view) {
    return page(ctx, view, 'public-content', publishedFilter(ctx, view, input), input.limit, input.cursor);
  },
});

export const publicGetContentOp = definePublicOperation({
  id: 'public.content.get',
  path: '/content/:slug',
  summary: 'One published entry by slug, with fields and publishing metadata',
  description: 'In a preview (editor session) drafts are found too and the working revision is shown.',
  input: z.object({ slug: z.string(), locale: z.string().optional() }),
  output: PublicEntryView.extend({ locale: z.string() }),
  async handler(ctx, { slug }, view) {
    const filter = publishedFilter(ctx, view, { slug });
    // Editors preview drafts and scheduled entries as well as published ones.
    if (view.preview) filter.status = { $in: ['draft', 'published', 'scheduled', 'archived'] };
    const doc = await contentCollections(ctx.db).entries.findOne(filter);
    if (!doc) throw new NotFoundError();
    const pathOf = await publicPlacer(ctx, [doc], view);
    return toPublicEntry(doc, view.preview, pathOf(doc));
  },
});

export const publicSearchOp = definePublicOperation({
  id: 'public.search',
  path: '/search',
  summary: 'Search published content, best match first',
  description:
    'Words of the title, excerpt, body and custom text fields of the published entries of one locale, ranked (title first, then excerpt, then body). Every word must be found; the last one also as the start of a word (search as you type). Limited to 60 requests per minute per IP.',
  rateLimit: { perMinute: 60, by: 'ip' },
  input: z.object({
    // Not trimmed: a space after the last word says it is whole (no prefix match).
    q: z
      .string()
      .max(200)
      .refine((q) => q.trim().length > 0, 'must not be empty'),
    type: z.string().optional(),
    term: z.string().max(200).optional().describe('A term id: only entries that hold it'),
    locale: z.string().optional(),
    limit: publicLimit,
    cursor: z.string().optional(),
  }),
  output: PublicList,
  async handler(ctx, input, view) {
    // A preview searches the working revisions of the published entries.
    const ranked = await rankEntries(ctx, {
      view: view.preview ? 'w' : 'p',
      locales: [view.locale],
      q: input.q,
      type: input.type,
      term: input.term,
      status: 'published',
      depth: orderedPageEnd(ctx, 'public-search', input),
    });
    const { items: ids, page } = pageInOrder(ctx, 'public-search', ranked, (id) => id, input);
    const filter = publishedFilter(ctx, view, { type: input.type });
    const docs = view.preview
      ? await entriesInOrder<EntryDoc>(ctx, ids, filter)
      : await wholeWhereBare(ctx, await entriesInOrder<EntryDoc>(ctx, ids, filter, PUBLISHED_FIELDS));
    const pathOf = await publicPlacer(ctx, docs, view);
    return { items: docs.map((doc) => toPublicEntry(doc, view.preview, pathOf(doc))), nextCursor: page.nextCursor, total: docs.length, locale: view.locale };
  },
});

export const publicContentTypesOp = definePublicOperation({
  id: 'public.contentTypes.list',
  path: '/content-types',
  summary: 'Content types with their field schemas',
  input: z.object({}),
  output: z.object({ types: z.array(ContentTypeView) }),
  async handler(ctx) {
    return { types: await listContentTypes(ctx) };
  },
});
