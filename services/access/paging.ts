import { z } from 'zod';
import type { Collection, Document, Filter } from 'mongodb';
import type { OperationContext } from '../core/context.ts';

export const PageQuery = {
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(500).optional(),
};

export const pageEnvelope = <T extends z.ZodType>(item: T) =>
  z.object({
    data: z.array(item),
    page: z.object({ limit: z.number(), cursor: z.string().nullable(), nextCursor: z.string().nullable(), total: z.number() }),
  });

/** One page sorted by `_id` (time-ordered and unique), so paging while inserting skips nothing. */
export async function pageById<T extends Document & { _id: string }>(
  ctx: OperationContext,
  list: string,
  collection: Collection<T>,
  filter: Filter<T>,
  query: { limit: number; cursor?: string },
): Promise<{ rows: T[]; page: { limit: number; cursor: string | null; nextCursor: string | null; total: number } }> {
  const after = query.cursor ? String(ctx.services.cursors.decode(list, query.cursor).after) : undefined;
  const where = (after ? { $and: [filter, { _id: { $gt: after } }] } : filter) as Filter<T>;
  const found = (await collection.find(where).sort({ _id: 1 }).limit(query.limit + 1).toArray()) as T[];
  const rows = found.slice(0, query.limit);
  const nextCursor = found.length > query.limit ? ctx.services.cursors.encode(list, { after: rows[rows.length - 1]._id }) : null;
  return { rows, page: { limit: query.limit, cursor: query.cursor ?? null, nextCursor, total: rows.length } };
}
