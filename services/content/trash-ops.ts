import { MEDIA_SCOPE_FIELDS } from '../media/model.ts';
import { ENTRY_SCOPE } from './model.ts';
import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import type { OperationContext } from '../core/context.ts';
import type { TrashKind, TrashMark } from '../core/feature.ts';
import { BadRequestError, NotFoundError } from '../core/errors.ts';
import { PageInfo, manageLimit } from '../core/paging.ts';

/** Every feature's trash kinds (entries, menus, media): `/trash` owns none of the storage. */
export function trashKinds(ctx: OperationContext): TrashKind[] {
  return ctx.services.features.flatMap((feature) => [...(feature.trash ?? [])]);
}

function kindNamed(ctx: OperationContext, kind: string): TrashKind {
  const found = trashKinds(ctx).find((k) => k.kind === kind);
  if (!found) throw new BadRequestError(`kind: unknown trash kind "${kind}"`);
  return found;
}

function markOf(position: Record<string, unknown>): TrashMark {
  const at = typeof position.at === 'string' ? new Date(position.at) : null;
  if (!at || Number.isNaN(at.getTime()) || typeof position.id !== 'string') throw new BadRequestError('Invalid cursor');
  return { trashedAt: at, id: position.id };
}

const TrashedItem = z.object({ kind: z.string(), id: z.string(), title: z.string(), trashedAt: z.string() });

export const listTrashOp = defineOperation({
  id: 'trash.list',
  surface: 'manage',
  method: 'GET',
  path: '/trash',
  summary: 'Trashed items of every kind, most recently trashed first',
  description: 'Pages with a cursor like every list; the stores of every kind are merged by `trashedAt`, then id (both descending).',
  requires: 'content:delete',
  scope: [ENTRY_SCOPE, MEDIA_SCOPE_FIELDS],
  input: z.object({ kind: z.string().optional(), limit: manageLimit, cursor: z.string().optional() }),
  output: z.object({
    data: z.array(TrashedItem),
    page: PageInfo,
  }),
  async handler(ctx, { kind, limit, cursor }) {
    const kinds = kind ? [kindNamed(ctx, kind)] : trashKinds(ctx);
    const list = `trash:${kind ?? '*'}:${ctx.site._id}`;
    const mark = cursor ? markOf(ctx.services.cursors.decode(list, cursor)) : null;
    // Each store gives its first `limit + 1` after the mark; merged, the first `limit` are the page.
    const lists = await Promise.all(kinds.map((k) => k.list(ctx, limit + 1, mark)));
    const merged = lists.flat().sort((a, b) => b.trashedAt.localeCompare(a.trashedAt) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    const data = merged.slice(0, limit);
    const last = data.at(-1);
    const nextCursor = merged.length > limit && last ? ctx.services.cursors.encode(list, { at: last.trashedAt, id: last.id }) : null;
    return { data, page: { limit, cursor: cursor ?? null, nextCursor, total: data.length } };
  },
});

export const restoreTrashOp = defineOperation({
  id: 'trash.restore',
  surface: 'manage',
  method: 'POST',
  path: '/trash/restore',
  summary: 'Restore one trashed item',
  requires: 'content:delete',
  scope: [ENTRY_SCOPE, MEDIA_SCOPE_FIELDS],
  input: z.object({ kind: z.string(), id: z.string() }),
  output: z.object({ kind: z.string(), id: z.string(), restored: z.boolean() }),
  // A restored entry is a draft again: subscribers hear it as an update.
  events: ['content.updated', 'media.restored'],
  async handler(ctx, { kind, id }) {
    if (!(await kindNamed(ctx, kind).restore(ctx, id))) throw new NotFoundError();
    return { kind, id, restored: true };
  },
});

export const purgeTrashOp = defineOperation({
  id: 'trash.purge',
  surface: 'manage',
  method: 'DELETE',
  path: '/trash',
  summary: 'Permanently remove one trashed item (kind and id) or everything in the trash (of one kind)',
  requires: 'site:admin',
  // Needs no scoped capability, but purges entries and media: a scoped key purges only its own.
  scope: [ENTRY_SCOPE, MEDIA_SCOPE_FIELDS],
  input: z.object({ kind: z.string().optional(), id: z.string().optional() }),
  output: z.object({ purged: z.number().int() }),
  async handler(ctx, { kind, id }) {
    if (id) {
      if (!kind) throw new BadRequestError('kind: required with id');
      if (!(await kindNamed(ctx, kind).purge(ctx, id))) throw new NotFoundError();
      return { purged: 1 };
    }
    let purged = 0;
    for (const trashKind of kind ? [kindNamed(ctx, kind)] : trashKinds(ctx)) {
      // Batches until the kind's trash is empty (each purge removes the row it listed).
      for (let round = 0; round < 1000; round++) {
        const batch = await trashKind.list(ctx, 200, null);
        let removed = 0;
        for (const item of batch) if (await trashKind.purge(ctx, item.id)) removed++;
        purged += removed;
        if (removed === 0) break;
      }
    }
    return { purged };
  },
});
