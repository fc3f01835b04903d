import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { NotFoundError } from '../core/errors.ts';
import { definePublicOperation } from '../public-read/runner.ts';
import { menusCollection, MenuView, resolveMenus } from './menus.ts';

/** Menus for the resolved locale: those of that locale and those shown in every locale. */
const localeFilter = (ctx: OperationContext, locale: string) => ({ siteId: ctx.site._id, trashedAt: null, locale: { $in: [locale, null] } });

export const publicListMenusOp = definePublicOperation({
  id: 'public.menus.list',
  path: '/menus',
  summary: 'Menus of the locale with resolved items',
  input: z.object({ locale: z.string().optional() }),
  output: z.object({ menus: z.array(MenuView), locale: z.string() }),
  async handler(ctx, _input, view) {
    const menus = await menusCollection(ctx).find(localeFilter(ctx, view.locale)).sort({ slug: 1 }).limit(200).toArray();
    return { menus: await resolveMenus(ctx, menus, !view.preview), locale: view.locale };
  },
});

export const publicGetMenuOp = definePublicOperation({
  id: 'public.menus.get',
  path: '/menus/:slug',
  summary: 'One menu with resolved items',
  input: z.object({ slug: z.string(), locale: z.string().optional() }),
  output: z.object({ menu: MenuView, locale: z.string() }),
  async handler(ctx, { slug }, view) {
    const menu = await menusCollection(ctx).findOne({ ...localeFilter(ctx, view.locale), slug });
    if (!menu) throw new NotFoundError();
    return { menu: (await resolveMenus(ctx, [menu], !view.preview))[0], locale: view.locale };
  },
});
