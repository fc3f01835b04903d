import { z } from 'zod';
import type { Filter } from 'mongodb';
import { defineOperation } from '../core/operation.ts';
import type { OperationContext } from '../core/context.ts';
import { BadRequestError, NotFoundError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { PageQuery, pageById, pageEnvelope } from '../core/paging.ts';
import { endOf, requireArea, toWidgetView, WidgetBody, widgetsCollection, WidgetView, type WidgetDoc } from './widgets.ts';

async function checkArea(ctx: OperationContext, area: string | null) {
  // An unknown area is bad input, not a missing resource: the widget itself is what is addressed.
  if (area) await requireArea(ctx, area).catch(() => Promise.reject(new BadRequestError(`area: unknown widget area ${area}`)));
}

export const listWidgetsOp = defineOperation({
  id: 'widgets.list',
  surface: 'manage',
  method: 'GET',
  path: '/widgets',
  summary: 'Widgets (`?area=key`, or `?area=inactive` for widgets in no area)',
  requires: 'content:read',
  scope: 'none',
  input: z.object({ ...PageQuery, area: z.string().optional() }),
  output: pageEnvelope(WidgetView),
  async handler(ctx, { area, ...query }) {
    const filter: Filter<WidgetDoc> = { siteId: ctx.site._id };
    if (area) filter.area = area === 'inactive' ? null : area;
    const { rows, page } = await pageById(ctx, `widgets:${ctx.site._id}`, widgetsCollection(ctx), filter, query);
    return { data: rows.map(toWidgetView), page };
  },
});

export const createWidgetOp = defineOperation({
  id: 'widgets.create',
  surface: 'manage',
  method: 'POST',
  path: '/widgets',
  summary: 'Add a widget, at the end of its area (or inactive with `area: null`)',
  requires: 'settings:manage',
  status: 201,
  input: WidgetBody,
  output: WidgetView,
  async handler(ctx, body) {
    await checkArea(ctx, body.area);
    const now = ctx.services.clock.now();
    const doc: WidgetDoc = { _id: newId(), siteId: ctx.site._id, ...body, position: await endOf(ctx, body.area), createdAt: now, updatedAt: now };
    await widgetsCollection(ctx).insertOne(doc);
    return toWidgetView(doc);
  },
});

export const putWidgetOp = defineOperation({
  id: 'widgets.put',
  surface: 'manage',
  method: 'PUT',
  path: '/widgets/:id',
  summary: 'Replace a widget; a new area puts it at that area’s end',
  requires: 'settings:manage',
  input: WidgetBody.extend({ id: z.string() }),
  output: WidgetView,
  async handler(ctx, { id, ...body }) {
    const current = await widgetsCollection(ctx).findOne({ siteId: ctx.site._id, _id: id });
    if (!current) throw new NotFoundError('Widget not found');
    await checkArea(ctx, body.area);
    const position = current.area === body.area ? current.position : await endOf(ctx, body.area);
    const doc = await widgetsCollection(ctx).findOneAndUpdate(
      { siteId: ctx.site._id, _id: id },
      { $set: { ...body, position, updatedAt: ctx.services.clock.now() } },
      { returnDocument: 'after' },
    );
    if (!doc) throw new NotFoundError('Widget not found');
    return toWidgetView(doc);
  },
});

export const deleteWidgetOp = defineOperation({
  id: 'widgets.delete',
  surface: 'manage',
  method: 'DELETE',
  path: '/widgets/:id',
  summary: 'Remove a widget',
  requires: 'settings:manage',
  input: z.object({ id: z.string() }),
  output: z.object({ id: z.string(), deleted: z.boolean() }),
  async handler(ctx, { id }) {
    const { deletedCount } = await widgetsCollection(ctx).deleteOne({ siteId: ctx.site._id, _id: id });
    if (!deletedCount) throw new NotFoundError('Widget not found');
    return { id, deleted: true };
  },
});

export const widgetOperations = [listWidgetsOp, createWidgetOp, putWidgetOp, deleteWidgetOp];
