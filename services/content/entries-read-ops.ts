import { z } from 'zod';
import type { Filter } from 'mongodb';
import { defineOperation } from '../core/operation.ts';
import { COLLECTIONS, contentCollections, ENTRY_SCOPE, EntryStatusSchema, type EntryDoc } from './model.ts';
import { EntryListItem, EntryView, LIST_ITEM_FIELDS, toEntryView, toListItem } from './entry-view.ts';
import { PageInfo, decodeAfterId, manageLimit, orderedPageEnd, pageInOrder, pageOf } from '../core/paging.ts';
import { BadRequestError } from '../core/errors.ts';
import type { OperationContext } from '../core/context.ts';
import { loadLanguages } from '../languages/languages.ts';
import { SEARCH_COLLECTION } from './search-index.ts';
import { entriesInOrder, rankEntries } from './search-query.ts';
import { findEntryInScope } from './entries.ts';

export const listEntriesOp = defineOperation({
  id: 'content.list',
  surface: 'manage',
  method: 'GET',
  path: '/content',
  summary: 'List content entries (newest first, oldest first with `order`, or best match first with `search`), filtered to the key scope',
  requires: 'content:read',
  scope: ENTRY_SCOPE,
  heldAnswer: { reads: [COLLECTIONS.entries, SEARCH_COLLECTION] },
  input: z.object({
    type: z.string().optional(),
    status: EntryStatusSchema.optional(),
    locale: z.string().optional(),
    search: z
      .string()
      .max(200)
      .optional()
      .describe('Words of the title, slug, excerpt, body or custom text fields (working revision), best match first; the last word also as a prefix'),
    term: z.string().max(200).optional().describe('With `search`: only entries that hold this term id'),
    author: z.string().optional().describe('User id'),
    order: z
      .enum(['newest', 'oldest'])
      .default('newest')
      .describe('By creation (the id): `newest` first or `oldest` first; a `search` orders by best match instead'),
    limit: manageLimit,
    cursor: z.string().optional(),
  }),
  output: z.object({
    data: z.array(EntryListItem),
    page: PageInfo,
  }),
  async handler(ctx, input) {
    const search = input.search?.trim() ? input.search : undefined;
    if (input.term !== undefined && !search) throw new BadRequestError('term: filters a search (give search)');
    const query: Filter<EntryDoc> = { siteId: ctx.site._id, trashedAt: null };
    if (input.type) query.type = input.type;
    if (input.status) query.status = input.status;
    if (input.locale) query.locale = input.locale;
    if (input.author) query.authorId = input.author;
    if (search) return searchEntries(ctx, { ...input, search }, query);
    // Each order has its own cursor list: a cursor of one order is refused by the other.
    const oldest = input.order === 'oldest';
    const list = oldest ? 'content-oldest' : 'content';
    const after = decodeAfterId(ctx, list, input.cursor);
    if (after) query._id = oldest ? { $gt: after } : { $lt: after };
    // The same indexes serve both orders (read backwards for the oldest first).
    const rows = await contentCollections(ctx.db)
      .entries.find(ctx.scope.filter(query as Filter<EntryDoc>, ENTRY_SCOPE), { projection: LIST_ITEM_FIELDS })
      .sort({ _id: oldest ? 1 : -1 })
      .limit(input.limit + 1)
      .toArray();
    const { items, nextCursor } = pageOf(ctx, list, rows, input.limit);
    return {
      data: items.map(toListItem),
      page: { limit: input.limit, cursor: input.cursor ?? null, nextCursor, total: items.length },
    };
  },
});

/** The list's `search`: ranked by the index over the working revisions, the list's filters and the key scope applied. */
async function searchEntries(
  ctx: OperationContext,
  input: { search: string; type?: string; status?: EntryDoc['status']; locale?: string; author?: string; term?: string; limit: number; cursor?: string },
  filter: Filter<EntryDoc>,
) {
  const locales = input.locale ? [input.locale] : (await loadLanguages(ctx)).languages.map((language) => language.code);
  const ranked = await rankEntries(ctx, {
    view: 'w',
    locales,
    q: input.search,
    type: input.type,
    term: input.term,
    status: input.status,
    author: input.author,
    scope: ctx.scope.filter({}, ENTRY_SCOPE),
    depth: orderedPageEnd(ctx, 'content-search', input),
  });
  const { items: ids, page } = pageInOrder(ctx, 'content-search', ranked, (id) => id, input);
  const rows = await entriesInOrder<Pick<EntryDoc, keyof typeof LIST_ITEM_FIELDS>>(ctx, ids, ctx.scope.filter(filter, ENTRY_SCOPE), LIST_ITEM_FIELDS);
  return { data: rows.map(toListItem), page: { ...page, total: rows.length } };
}

export const getEntryOp = defineOperation({
  id: 'content.get',
  surface: 'manage',
  method: 'GET',
  path: '/content/:id',
  summary: 'One content entry (working revision)',
  requires: 'content:read',
  scope: ENTRY_SCOPE,
  heldAnswer: { reads: [COLLECTIONS.entries] },
  input: z.object({ id: z.string() }),
  output: EntryView,
  async handler(ctx, { id }) {
    return toEntryView(await findEntryInScope(ctx, id));
  },
});
