import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import type { OperationContext } from '../core/context.ts';
import { BadRequestError } from '../core/errors.ts';
import { listContentTypes } from '../content/content-types.ts';
import { deleteDesign, readDesign, writeDesign } from './store.ts';
import { areasCollection } from './widgets.ts';

/** Content type slug → the widget areas its pages show, in order. */
const Layout = z.record(z.string(), z.array(z.string()).max(20));
export type WidgetLayout = z.infer<typeof Layout>;
type Layout = WidgetLayout;
export const LayoutView = z.object({ layout: Layout });

export async function readLayout(ctx: OperationContext): Promise<Layout> {
  return (await readDesign<Layout>(ctx, 'widget-layout', 'default'))?.value ?? {};
}

export async function writeLayout(ctx: OperationContext, layout: Layout): Promise<void> {
  await writeDesign(ctx, 'widget-layout', 'default', layout);
}

export const getLayoutOp = defineOperation({
  id: 'widgetLayout.get',
  surface: 'manage',
  method: 'GET',
  path: '/widgets/layout',
  summary: 'Which widget areas each content type shows',
  requires: 'content:read',
  scope: 'none',
  input: z.object({}),
  output: LayoutView,
  async handler(ctx) {
    return { layout: await readLayout(ctx) };
  },
});

export const putLayoutOp = defineOperation({
  id: 'widgetLayout.put',
  surface: 'manage',
  method: 'PUT',
  path: '/widgets/layout',
  summary: 'Replace the layout (known content types and existing areas only)',
  requires: 'settings:manage',
  input: LayoutView,
  output: LayoutView,
  async handler(ctx, { layout }) {
    const types = new Set((await listContentTypes(ctx)).map((t) => t.slug));
    const unknownType = Object.keys(layout).find((t) => !types.has(t));
    if (unknownType) throw new BadRequestError(`layout.${unknownType}: unknown content type`);
    const wanted = [...new Set(Object.values(layout).flat())];
    const existing = new Set(
      (
        await areasCollection(ctx)
          .find({ siteId: ctx.site._id, key: { $in: wanted } })
          .toArray()
      ).map((a) => a.key),
    );
    const missing = wanted.find((k) => !existing.has(k));
    if (missing) throw new BadRequestError(`layout: unknown widget area ${missing}`);
    await writeLayout(ctx, layout);
    return { layout };
  },
});

export const deleteLayoutOp = defineOperation({
  id: 'widgetLayout.delete',
  surface: 'manage',
  method: 'DELETE',
  path: '/widgets/layout',
  summary: 'Clear the layout: every area shows on every page again (the theme default) until a new one is put',
  requires: 'settings:manage',
  input: z.object({}),
  output: LayoutView,
  async handler(ctx) {
    await deleteDesign(ctx, 'widget-layout', 'default');
    return { layout: {} };
  },
});
