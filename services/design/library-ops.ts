import { z } from 'zod';
import { defineOperation, type Operation } from '../core/operation.ts';
import type { OperationContext } from '../core/context.ts';
import { BadRequestError, NotFoundError } from '../core/errors.ts';
import { pageEnvelope, PageQuery, pageById } from '../core/paging.ts';
import { designCollection, deleteDesign, writeDesign, type DesignKind } from './store.ts';

/**
 * A per-site library of keyed items edited as a set: GET exports it (paged), PUT imports items
 * (upsert by key; `replace: true` first removes the items not in the import), DELETE `?key=`
 * removes one. Patterns, reusable blocks and error pages all work this way.
 */
export interface LibrarySpec<S extends z.ZodObject> {
  kind: DesignKind;
  path: string;
  idPrefix: string;
  noun: string;
  /** The item's key field (`slug`, `code`) and its schema. */
  keyField: string;
  key: z.ZodType<string>;
  /** An item as imported (links checked: core/safe-url.ts). */
  item: S;
  /** An item as answered: stored data, which may predate the input's checks. */
  view: z.ZodObject;
  maxItems: number;
}

export function libraryOperations<S extends z.ZodObject>(spec: LibrarySpec<S>): Operation[] {
  const Item = spec.item.extend({ [spec.keyField]: spec.key });
  const View = spec.view.extend({ [spec.keyField]: z.string(), updatedAt: z.string() });
  type Value = z.output<S>;
  const toView = (doc: { key: string; value: Value; updatedAt: Date }) => ({ ...doc.value, [spec.keyField]: doc.key, updatedAt: doc.updatedAt.toISOString() });
  const keyOf = (item: Record<string, unknown>) => String(item[spec.keyField]);

  const list = defineOperation({
    id: `${spec.idPrefix}.list`,
    surface: 'manage',
    method: 'GET',
    path: spec.path,
    summary: `Export the ${spec.noun} library`,
    requires: 'content:read',
    scope: 'none',
    input: z.object(PageQuery),
    output: pageEnvelope(View),
    async handler(ctx: OperationContext, query) {
      const filter = { siteId: ctx.site._id, kind: spec.kind };
      const { rows, page } = await pageById(ctx, `${spec.idPrefix}:${ctx.site._id}`, designCollection<Value>(ctx), filter, query);
      return { data: rows.map(toView), page } as never;
    },
  });

  const put = defineOperation({
    id: `${spec.idPrefix}.import`,
    surface: 'manage',
    method: 'PUT',
    path: spec.path,
    summary: `Import ${spec.noun} items (upsert by ${spec.keyField}; \`replace: true\` drops the others)`,
    requires: 'settings:manage',
    input: z.object({ items: z.array(Item).max(spec.maxItems), replace: z.boolean().default(false) }),
    output: z.object({ data: z.array(View), removed: z.number().int() }),
    async handler(ctx: OperationContext, { items, replace }) {
      const keys = (items as Record<string, unknown>[]).map(keyOf);
      if (new Set(keys).size !== keys.length) throw new BadRequestError(`items: a ${spec.keyField} is listed twice`);
      const existing = await designCollection(ctx).countDocuments({ siteId: ctx.site._id, kind: spec.kind, key: { $nin: keys } });
      if (!replace && existing + keys.length > spec.maxItems) throw new BadRequestError(`items: at most ${spec.maxItems} in the library`);
      const saved = [];
      for (const item of items as Record<string, unknown>[]) {
        const { [spec.keyField]: _key, ...value } = item;
        saved.push(toView(await writeDesign(ctx, spec.kind, keyOf(item), value as Value)));
      }
      const removed = replace ? (await designCollection(ctx).deleteMany({ siteId: ctx.site._id, kind: spec.kind, key: { $nin: keys } })).deletedCount : 0;
      return { data: saved, removed } as never;
    },
  });

  const remove = defineOperation({
    id: `${spec.idPrefix}.delete`,
    surface: 'manage',
    method: 'DELETE',
    path: spec.path,
    summary: `Remove one ${spec.noun} (\`?${spec.keyField}=\`)`,
    requires: 'settings:manage',
    input: z.object({ [spec.keyField]: z.string().min(1) }),
    output: z.object({ [spec.keyField]: z.string(), deleted: z.boolean() }),
    async handler(ctx: OperationContext, input) {
      const key = String((input as Record<string, unknown>)[spec.keyField]);
      if (!(await deleteDesign(ctx, spec.kind, key))) throw new NotFoundError(`No such ${spec.noun}`);
      return { [spec.keyField]: key, deleted: true } as never;
    },
  });

  return [list, put, remove] as unknown as Operation[];
}
