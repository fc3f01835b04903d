import { z } from 'zod';
import type { Filter } from 'mongodb';
import { defineOperation } from '../core/operation.ts';
import { COLLECTIONS, contentCollections, ENTRY_SCOPE, EntryStatusSchema, type EntryDoc } from './model.ts';
import { EntryListItem, EntryView, LIST_ITEM_FIELDS, toEntryView, toListItem } from './entry-view.ts';
import { PageInfo, decodeAfterId, manageLimit, pageOf } from '../core/paging.ts';
import { escapeRegex } from '../core/mongo-errors.ts';
import { findEntryInScope } from './entries.ts';

export const listEntriesOp = defineOperation({
  id: 'content.list',
  surface: 'manage',
  method: 'GET',
  path: '/content',
  summary: 'List content entries (newest first), filtered to the key scope',
  requires: 'content:read',
  scope: ENTRY_SCOPE,
  heldAnswer: { reads: [COLLECTIONS.entries] },
  input: z.object({
    type: z.string().optional(),
    status: EntryStatusSchema.optional(),
    locale: z.string().optional(),
    search: z.string().max(200).optional().describe('Case-insensitive match on title or slug'),
    author: z.string().optional().describe('User id'),
    limit: manageLimit,
    cursor: z.string().optional(),
  }),
  output: z.object({
    data: z.array(EntryListItem),
    page: PageInfo,
  }),
  async handler(ctx, input) {
    const after = decodeAfterId(ctx, 'content', input.cursor);
    const query: Filter<EntryDoc> = { siteId: ctx.site._id, trashedAt: null };
    if (input.type) query.type = input.type;
    if (input.status) query.status = input.status;
    if (input.locale) query.locale = input.locale;
    if (input.author) query.authorId = input.author;
    if (after) query._id = { $lt: after };
    const search = input.search?.trim().toLowerCase();
    if (search) {
      const pattern = escapeRegex(search);
      query.$or = [{ titleLower: { $regex: pattern } }, { slug: { $regex: pattern } }];
    }
    const rows = await contentCollections(ctx.db)
      .entries.find(ctx.scope.filter(query as Filter<EntryDoc>, ENTRY_SCOPE), { projection: LIST_ITEM_FIELDS })
      .sort({ _id: -1 })
      .limit(input.limit + 1)
      .toArray();
    const { items, nextCursor } = pageOf(ctx, 'content', rows, input.limit);
    return {
      data: items.map(toListItem),
      page: { limit: input.limit, cursor: input.cursor ?? null, nextCursor, total: items.length },
    };
  },
});

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
