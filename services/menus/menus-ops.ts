import { z } from 'zod';
import { ListQuery, pageEnvelope, pageInOrder } from '../core/paging.ts';
import { FreeFormObject } from '../core/safe-keys.ts';
import { defineOperation } from '../core/operation.ts';
import type { OperationContext } from '../core/context.ts';
import { ConflictError, NotFoundError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { SlugSchema } from '../content/entry-input.ts';
import { isDuplicateKey } from '../core/mongo-errors.ts';
import { MenuItemInput, menusCollection, MenuView, requireMenu, resolveMenus, type MenuDoc, type MenuItem } from './menus.ts';

const MenuBody = {
  name: z.string().trim().min(1).max(200),
  locale: z.string().nullable().default(null),
  location: z.string().max(100).nullable().default(null),
  layout: FreeFormObject.default({}),
  design: FreeFormObject.default({}),
  items: z.array(MenuItemInput).max(200).default([]),
};

async function resolvedOne(ctx: OperationContext, menu: MenuDoc): Promise<MenuView> {
  return (await resolveMenus(ctx, [menu], false))[0];
}

export const listMenusOp = defineOperation({
  id: 'menus.list',
  surface: 'manage',
  method: 'GET',
  path: '/menus',
  summary: 'Menus with resolved items, layout and design',
  requires: 'content:read',
  scope: 'none',
  input: ListQuery,
  output: pageEnvelope(MenuView),
  async handler(ctx, query) {
    const menus = await menusCollection(ctx).find({ siteId: ctx.site._id, trashedAt: null }).sort({ slug: 1 }).toArray();
    const { items, page } = pageInOrder(ctx, 'menus', menus, (menu) => menu.slug, query);
    return { data: await resolveMenus(ctx, items, false), page };
  },
});

export const getMenuOp = defineOperation({
  id: 'menus.get',
  surface: 'manage',
  method: 'GET',
  path: '/menus/:slug',
  summary: 'One menu with resolved items',
  requires: 'content:read',
  scope: 'none',
  input: z.object({ slug: z.string() }),
  output: MenuView,
  async handler(ctx, { slug }) {
    return resolvedOne(ctx, await requireMenu(ctx, slug));
  },
});

export const createMenuOp = defineOperation({
  id: 'menus.create',
  surface: 'manage',
  method: 'POST',
  path: '/menus',
  summary: 'Create a menu',
  requires: 'settings:manage',
  errors: [409],
  status: 201,
  input: z.object({ slug: SlugSchema, ...MenuBody }),
  output: MenuView,
  async handler(ctx, input) {
    const now = ctx.services.clock.now();
    const doc: MenuDoc = { _id: newId(), siteId: ctx.site._id, ...input, items: input.items as MenuItem[], createdAt: now, updatedAt: now, trashedAt: null };
    try {
      await menusCollection(ctx).insertOne(doc);
    } catch (error) {
      if (isDuplicateKey(error)) throw new ConflictError('A menu with this slug exists (it may be in the trash)');
      throw error;
    }
    return resolvedOne(ctx, doc);
  },
});

export const replaceMenuOp = defineOperation({
  id: 'menus.replace',
  surface: 'manage',
  method: 'PUT',
  path: '/menus/:slug',
  summary: 'Replace a menu (name, locale, location, layout, design and items)',
  requires: 'settings:manage',
  input: z.object({ slug: z.string(), ...MenuBody }),
  output: MenuView,
  async handler(ctx, { slug, ...body }) {
    const doc = await menusCollection(ctx).findOneAndUpdate(
      { siteId: ctx.site._id, slug, trashedAt: null },
      { $set: { ...body, items: body.items as MenuItem[], updatedAt: ctx.services.clock.now() } },
      { returnDocument: 'after' },
    );
    if (!doc) throw new NotFoundError('Menu not found');
    return resolvedOne(ctx, doc);
  },
});

export const deleteMenuOp = defineOperation({
  id: 'menus.delete',
  surface: 'manage',
  method: 'DELETE',
  path: '/menus/:slug',
  summary: 'Move a menu to the trash',
  requires: 'settings:manage',
  input: z.object({ slug: z.string() }),
  output: z.object({ id: z.string(), trashed: z.boolean() }),
  async handler(ctx, { slug }) {
    const now = ctx.services.clock.now();
    const doc = await menusCollection(ctx).findOneAndUpdate({ siteId: ctx.site._id, slug, trashedAt: null }, { $set: { trashedAt: now, updatedAt: now } });
    if (!doc) throw new NotFoundError('Menu not found');
    return { id: doc._id, trashed: true };
  },
});
