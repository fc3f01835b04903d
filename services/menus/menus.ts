import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { NotFoundError } from '../core/errors.ts';
import { contentCollections, type EntryDoc } from '../content/model.ts';
import { SafeUrlString, safeUrl } from '../core/safe-url.ts';

export interface MenuItem {
  label: string;
  url?: string;
  entryId?: string;
  target?: '_self' | '_blank';
  children?: MenuItem[];
}

export interface MenuDoc {
  _id: string;
  siteId: string;
  slug: string;
  name: string;
  /** null: shown for every locale. */
  locale: string | null;
  /** Theme location the menu fills (e.g. `primary`), and free-form layout and design options. */
  location: string | null;
  layout: Record<string, unknown>;
  design: Record<string, unknown>;
  items: MenuItem[];
  createdAt: Date;
  updatedAt: Date;
  trashedAt: Date | null;
}

export const MENUS_COLLECTION = 'menus';
export const menusCollection = (ctx: OperationContext) => ctx.db.collection<MenuDoc>(MENUS_COLLECTION);

/** Menus nest at most this deep. Fixed-depth schemas (no `z.lazy`) keep the OpenAPI document free of dangling `$ref`s. */
export const MAX_MENU_DEPTH = 4;

type ItemInput = { label: string; url?: string; entryId?: string; target?: '_self' | '_blank'; children?: ItemInput[] };
function itemInput(depth: number): z.ZodType<ItemInput> {
  const base = z.object({
    label: z.string().max(200).default(''),
    url: SafeUrlString.optional(),
    entryId: z.string().optional(),
    target: z.enum(['_self', '_blank']).optional(),
    ...(depth > 1
      ? {
          children: z
            .array(itemInput(depth - 1))
            .max(100)
            .optional(),
        }
      : {}),
  });
  return base
    .refine((item) => item.url || item.entryId, 'an item needs a url or an entryId')
    .refine((item) => item.label || item.entryId, 'an item without an entry needs a label') as unknown as z.ZodType<ItemInput>;
}
export const MenuItemInput = itemInput(MAX_MENU_DEPTH);

type ResolvedItem = { label: string; url: string | null; target: string; entry: { id: string; type: string; slug: string } | null; children: ResolvedItem[] };
function resolvedItem(depth: number): z.ZodType<ResolvedItem> {
  return z.object({
    label: z.string(),
    url: z.string().nullable(),
    target: z.string(),
    entry: z.object({ id: z.string(), type: z.string(), slug: z.string() }).nullable(),
    children: depth > 1 ? z.array(resolvedItem(depth - 1)) : z.array(z.never()),
  }) as unknown as z.ZodType<ResolvedItem>;
}
export const ResolvedItemView = resolvedItem(MAX_MENU_DEPTH);

export const MenuView = z.object({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  locale: z.string().nullable(),
  location: z.string().nullable(),
  layout: z.record(z.string(), z.unknown()),
  design: z.record(z.string(), z.unknown()),
  items: z.array(ResolvedItemView),
  updatedAt: z.string(),
});
export type MenuView = z.infer<typeof MenuView>;

function collectEntryIds(items: MenuItem[], into: Set<string>): Set<string> {
  for (const item of items) {
    if (item.entryId) into.add(item.entryId);
    if (item.children) collectEntryIds(item.children, into);
  }
  return into;
}

/**
 * Items pointing at entries get the entry's current title (when no label is given) and slug. On
 * the public side only published entries count (their published slug and title); an item whose
 * entry is not visible is left out, with its children. A stored URL the link rule refuses (saved
 * before the rule) is answered as no URL, so no client renders it as a link.
 */
export async function resolveMenus(ctx: OperationContext, menus: MenuDoc[], publicView: boolean): Promise<MenuView[]> {
  const ids = [
    ...collectEntryIds(
      menus.flatMap((m) => m.items),
      new Set(),
    ),
  ];
  const rows = ids.length
    ? await contentCollections(ctx.db)
        .entries.find({ siteId: ctx.site._id, _id: { $in: ids }, trashedAt: null })
        .toArray()
    : [];
  const entries = new Map<string, EntryDoc>(rows.filter((e) => !publicView || (e.status === 'published' && e.live)).map((e) => [e._id, e]));

  const resolve = (items: MenuItem[]): ResolvedItem[] =>
    items.flatMap((item) => {
      let entry: ResolvedItem['entry'] = null;
      let title: string | undefined;
      if (item.entryId) {
        const doc = entries.get(item.entryId);
        if (!doc)
          return publicView
            ? []
            : [{ label: item.label || '(missing entry)', url: null, target: item.target ?? '_self', entry: null, children: resolve(item.children ?? []) }];
        const slug = publicView && doc.live ? doc.live.slug : doc.slug;
        title = publicView && doc.live ? doc.live.title : doc.title;
        entry = { id: doc._id, type: doc.type, slug };
      }
      return [
        {
          label: item.label || title || '',
          url: (item.url ? safeUrl(item.url) : null) ?? (entry ? `/${entry.slug}` : null),
          target: item.target ?? '_self',
          entry,
          children: resolve(item.children ?? []),
        },
      ];
    });

  return menus.map((m) => ({
    id: m._id,
    slug: m.slug,
    name: m.name,
    locale: m.locale,
    location: m.location,
    layout: m.layout,
    design: m.design,
    items: resolve(m.items),
    updatedAt: m.updatedAt.toISOString(),
  }));
}

export async function requireMenu(ctx: OperationContext, slug: string): Promise<MenuDoc> {
  const menu = await menusCollection(ctx).findOne({ siteId: ctx.site._id, slug, trashedAt: null });
  if (!menu) throw new NotFoundError('Menu not found');
  return menu;
}
