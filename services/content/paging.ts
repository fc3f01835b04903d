import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { BadRequestError } from '../core/errors.ts';

/** `limit` of Management lists: 1–200, default 50 (query strings arrive as text). */
export const manageLimit = z.coerce.number().int().min(1).max(200).default(50);

/** Cursors are bound to a list and a site: one from another list or site is a 400. */
const listName = (ctx: OperationContext, list: string) => `${list}:${ctx.site._id}`;

/** The `_id` a page starts after, or null for the first page. */
export function decodeAfterId(ctx: OperationContext, list: string, cursor: string | undefined): string | null {
  if (!cursor) return null;
  const position = ctx.services.cursors.decode(listName(ctx, list), cursor);
  if (typeof position.after !== 'string') throw new BadRequestError('Invalid cursor');
  return position.after;
}

/**
 * Pages by `_id` descending (newest first; ids are time-ordered and unique). Rows inserted while a
 * client pages sort before its cursor, so the remaining pages neither repeat nor skip a row.
 * Call with `limit + 1` rows fetched: the extra one only says whether a next page exists.
 */
export function pageOf<T extends { _id: string }>(ctx: OperationContext, list: string, rows: T[], limit: number) {
  const items = rows.slice(0, limit);
  const nextCursor = rows.length > limit ? ctx.services.cursors.encode(listName(ctx, list), { after: items[items.length - 1]._id }) : null;
  return { items, nextCursor };
}
