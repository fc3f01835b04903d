import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { BadRequestError } from '../core/errors.ts';

/**
 * Paging of the in-memory registries (plugins, themes): sorted by their unique id, the cursor
 * holds the last id shown. Signed and bound to the list and the site like every other cursor.
 */
export const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().optional(),
});

export function pageEnvelope<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item),
    page: z.object({ limit: z.number().int(), cursor: z.string().nullable(), nextCursor: z.string().nullable(), total: z.number().int() }),
  });
}

export function pageByKey<T>(ctx: OperationContext, list: string, sorted: readonly T[], key: (item: T) => string, input: z.infer<typeof ListQuery>) {
  const name = `${list}:${ctx.site._id}`;
  let rest = sorted;
  if (input.cursor) {
    const { after } = ctx.services.cursors.decode(name, input.cursor);
    if (typeof after !== 'string') throw new BadRequestError('Invalid cursor');
    rest = sorted.filter((item) => key(item) > after);
  }
  const items = rest.slice(0, input.limit);
  const nextCursor = rest.length > input.limit ? ctx.services.cursors.encode(name, { after: key(items[items.length - 1]) }) : null;
  return { items, page: { limit: input.limit, cursor: input.cursor ?? null, nextCursor, total: items.length } };
}
