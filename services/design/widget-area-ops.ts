import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { BadRequestError, ConflictError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { isDuplicateKey } from '../core/mongo-errors.ts';
import { PageQuery, pageById, pageEnvelope } from '../core/paging.ts';
import { AreaKey, AreaView, areasCollection, requireArea, toAreaViews, widgetsCollection, type AreaDoc } from './widgets.ts';
import { readLayout, writeLayout } from './widget-layout-ops.ts';

const AreaBody = { name: z.string().trim().min(1).max(200), description: z.string().trim().max(1000).default('') };

export const listAreasOp = defineOperation({
  id: 'widgetAreas.list',
  surface: 'manage',
  method: 'GET',
  path: '/widgets/areas',
  summary: 'Widget areas with their widgets in order',
  requires: 'content:read',
  scope: 'none',
  input: z.object(PageQuery),
  output: pageEnvelope(AreaView),
  async handler(ctx, query) {
    const { rows, page } = await pageById(ctx, `widget-areas:${ctx.site._id}`, areasCollection(ctx), { siteId: ctx.site._id }, query);
    return { data: await toAreaViews(ctx, rows), page };
  },
});

export const createAreaOp = defineOperation({
  id: 'widgetAreas.create',
  surface: 'manage',
  method: 'POST',
  path: '/widgets/areas',
  summary: 'Add a widget area (409 when the key exists)',
  requires: 'settings:manage',
  errors: [409],
  status: 201,
  input: z.object({ key: AreaKey, ...AreaBody }),
  output: AreaView,
  async handler(ctx, input) {
    const now = ctx.services.clock.now();
    const doc: AreaDoc = { _id: newId(), siteId: ctx.site._id, ...input, createdAt: now, updatedAt: now };
    // The unique index decides races; this check also covers a workspace created before the index existed.
    if (await areasCollection(ctx).findOne({ siteId: ctx.site._id, key: input.key })) throw new ConflictError('A widget area with this key exists');
    try {
      await areasCollection(ctx).insertOne(doc);
    } catch (error) {
      if (isDuplicateKey(error)) throw new ConflictError('A widget area with this key exists');
      throw error;
    }
    return (await toAreaViews(ctx, [doc]))[0];
  },
});

export const getAreaOp = defineOperation({
  id: 'widgetAreas.get',
  surface: 'manage',
  method: 'GET',
  path: '/widgets/areas/:key',
  summary: 'One widget area with its widgets',
  requires: 'content:read',
  scope: 'none',
  input: z.object({ key: z.string() }),
  output: AreaView,
  async handler(ctx, { key }) {
    return (await toAreaViews(ctx, [await requireArea(ctx, key)]))[0];
  },
});

export const putAreaOp = defineOperation({
  id: 'widgetAreas.put',
  surface: 'manage',
  method: 'PUT',
  path: '/widgets/areas/:key',
  summary: 'Rename an area and, with `widgets` (ids in order), set which widgets it shows',
  description: 'Listed widgets move here in that order; widgets of this area left out become inactive.',
  requires: 'settings:manage',
  input: z.object({ key: z.string(), ...AreaBody, widgets: z.array(z.string()).max(200).optional() }),
  output: AreaView,
  async handler(ctx, { key, widgets, ...body }) {
    await requireArea(ctx, key);
    const siteId = ctx.site._id;
    if (widgets) {
      if (new Set(widgets).size !== widgets.length) throw new BadRequestError('widgets: an id is listed twice');
      const found = await widgetsCollection(ctx).countDocuments({ siteId, _id: { $in: widgets } });
      if (found !== widgets.length) throw new BadRequestError('widgets: unknown widget id');
    }
    const now = ctx.services.clock.now();
    const area = await areasCollection(ctx).findOneAndUpdate({ siteId, key }, { $set: { ...body, updatedAt: now } }, { returnDocument: 'after' });
    if (widgets) {
      await widgetsCollection(ctx).updateMany({ siteId, area: key, _id: { $nin: widgets } }, { $set: { area: null, updatedAt: now } });
      for (const [position, id] of widgets.entries()) {
        await widgetsCollection(ctx).updateOne({ siteId, _id: id }, { $set: { area: key, position, updatedAt: now } });
      }
    }
    return (await toAreaViews(ctx, [area!]))[0];
  },
});

export const deleteAreaOp = defineOperation({
  id: 'widgetAreas.delete',
  surface: 'manage',
  method: 'DELETE',
  path: '/widgets/areas/:key',
  summary: 'Remove an area; its widgets become inactive and the layout forgets it',
  requires: 'settings:manage',
  input: z.object({ key: z.string() }),
  output: z.object({ key: z.string(), deleted: z.boolean() }),
  async handler(ctx, { key }) {
    await requireArea(ctx, key);
    const siteId = ctx.site._id;
    const now = ctx.services.clock.now();
    await widgetsCollection(ctx).updateMany({ siteId, area: key }, { $set: { area: null, updatedAt: now } });
    const layout = await readLayout(ctx);
    const pruned = Object.fromEntries(Object.entries(layout).map(([type, areas]) => [type, areas.filter((a) => a !== key)]));
    await writeLayout(ctx, pruned);
    await areasCollection(ctx).deleteOne({ siteId, key });
    return { key, deleted: true };
  },
});

export const widgetAreaOperations = [listAreasOp, createAreaOp, getAreaOp, putAreaOp, deleteAreaOp];
