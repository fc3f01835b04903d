import { z } from 'zod';
import type { Collection, Document, Filter } from 'mongodb';
import type { OperationContext } from './context.ts';
import { BadRequestError } from './errors.ts';

/**
 * Paging of every Management list: `limit` 1–200 (default 50; query strings arrive as text) and an
 * opaque cursor. Cursors are signed and bound to a list and a site: one from another list or
 * site, or a tampered one, is a 400. Lists sort on a unique key (`_id`, time-ordered from
 * `newId()`), so rows inserted while a client pages are neither repeated nor skipped.
 */
export const manageLimit = z.coerce.number().int().min(1).max(200).default(50);

export const PageQuery = {
  limit: manageLimit,
  cursor: z.string().max(500).optional(),
};

export const ListQuery = z.object(PageQuery);

/** The `page` of the Management list envelope; `total` counts this page's items (contract 2.5). */
export const PageInfo = z.object({ limit: z.number().int(), cursor: z.string().nullable(), nextCursor: z.string().nullable(), total: z.number().int() });

export const pageEnvelope = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item), page: PageInfo });

const listName = (ctx: OperationContext, list: string) => `${list}:${ctx.site._id}`;

/** The key a page starts after, or null for the first page. */
export function decodeAfterId(ctx: OperationContext, list: string, cursor: string | undefined): string | null {
  if (!cursor) return null;
  const position = ctx.services.cursors.decode(listName(ctx, list), cursor);
  if (typeof position.after !== 'string') throw new BadRequestError('Invalid cursor');
  return position.after;
}

/**
 * One page of rows already fetched with `limit + 1` (the extra row only says whether a next page
 * exists), whatever their order.
 */
export function pageOf<T extends { _id: string }>(ctx: OperationContext, list: string, rows: T[], limit: number) {
  const items = rows.slice(0, limit);
  const nextCursor = rows.length > limit ? ctx.services.cursors.encode(listName(ctx, list), { after: items[items.length - 1]._id }) : null;
  return { items, nextCursor };
}

/** One page of a collection in ascending `_id` order, in the Management envelope's `page` shape. */
export async function pageById<T extends Document & { _id: string }>(
  ctx: OperationContext,
  list: string,
  collection: Collection<T>,
  filter: Filter<T>,
  query: { limit: number; cursor?: string },
) {
  const after = decodeAfterId(ctx, list, query.cursor);
  const where = (after ? { $and: [filter, { _id: { $gt: after } }] } : filter) as Filter<T>;
  const found = (await collection
    .find(where)
    .sort({ _id: 1 })
    .limit(query.limit + 1)
    .toArray()) as T[];
  const { items, nextCursor } = pageOf(ctx, list, found, query.limit);
  return { rows: items, page: { limit: query.limit, cursor: query.cursor ?? null, nextCursor, total: items.length } };
}

/** Paging of in-memory registries (plugins, themes), sorted by a unique key. */
export function pageByKey<T>(ctx: OperationContext, list: string, sorted: readonly T[], key: (item: T) => string, input: z.infer<typeof ListQuery>) {
  const after = decodeAfterId(ctx, list, input.cursor);
  const rest = after === null ? sorted : sorted.filter((item) => key(item) > after);
  const items = rest.slice(0, input.limit);
  const nextCursor = rest.length > input.limit ? ctx.services.cursors.encode(listName(ctx, list), { after: key(items[items.length - 1]) }) : null;
  return { items, page: { limit: input.limit, cursor: input.cursor ?? null, nextCursor, total: items.length } };
}

/** How far into its ordered list a request of `pageInOrder` reads: the page's end, and one more to tell whether others follow. */
export function orderedPageEnd(ctx: OperationContext, list: string, input: z.infer<typeof ListQuery>): number {
  if (!input.cursor) return input.limit + 1;
  const position = ctx.services.cursors.decode(listName(ctx, list), input.cursor);
  return (typeof position.at === 'number' ? position.at + 1 : 0) + input.limit + 1;
}

/**
 * Paging of a short list computed in memory in an order that means something (languages in their
 * order, built-in roles before custom ones). The cursor names the last item shown and its
 * position: the next page starts after that item, or at that position if it has gone since.
 */
export function pageInOrder<T>(ctx: OperationContext, list: string, ordered: readonly T[], key: (item: T) => string, input: z.infer<typeof ListQuery>) {
  let start = 0;
  if (input.cursor) {
    const position = ctx.services.cursors.decode(listName(ctx, list), input.cursor);
    if (typeof position.after !== 'string' || typeof position.at !== 'number') throw new BadRequestError('Invalid cursor');
    const found = ordered.findIndex((item) => key(item) === position.after);
    start = found >= 0 ? found + 1 : Math.min(position.at + 1, ordered.length);
  }
  const items = ordered.slice(start, start + input.limit);
  const last = start + items.length - 1;
  const nextCursor = last + 1 < ordered.length ? ctx.services.cursors.encode(listName(ctx, list), { after: key(ordered[last]), at: last }) : null;
  return { items, page: { limit: input.limit, cursor: input.cursor ?? null, nextCursor, total: items.length } };
}
