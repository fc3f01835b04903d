import { z } from 'zod';
import { FreeFormObject } from '../core/safe-keys.ts';
import { refuseUnsafeLinks } from '../core/safe-url.ts';
import type { OperationContext } from '../core/context.ts';
import { NotFoundError } from '../core/errors.ts';

export const WIDGET_COLLECTIONS = { areas: 'widget_areas', widgets: 'widgets' } as const;

/** Widget kinds the renderer knows; `settings` is free-form per kind. */
export const WIDGET_TYPES = ['text', 'html', 'image', 'menu', 'search', 'recent-posts', 'categories', 'tags', 'archives', 'custom'] as const;

export interface AreaDoc {
  _id: string;
  siteId: string;
  key: string;
  name: string;
  description: string;
  createdAt: Date;
  updatedAt: Date;
}

/** A widget instance; `area` null means inactive (kept, not shown), as when its area is deleted. */
export interface WidgetDoc {
  _id: string;
  siteId: string;
  area: string | null;
  position: number;
  type: (typeof WIDGET_TYPES)[number];
  title: string;
  settings: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

export const areasCollection = (ctx: Pick<OperationContext, 'db'>) => ctx.db.collection<AreaDoc>(WIDGET_COLLECTIONS.areas);
export const widgetsCollection = (ctx: Pick<OperationContext, 'db'>) => ctx.db.collection<WidgetDoc>(WIDGET_COLLECTIONS.widgets);

export const AreaKey = z
  .string()
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'lower-case letters, digits and single dashes')
  .max(100);

export const WidgetBody = z.object({
  type: z.enum(WIDGET_TYPES),
  title: z.string().trim().max(200).default(''),
  // Widget settings may carry links (an image widget's `url`): the link rule of core/safe-url.ts.
  settings: FreeFormObject.superRefine(refuseUnsafeLinks).default({}),
  area: AreaKey.nullable().default(null),
});

export const WidgetView = z.object({
  id: z.string(),
  area: z.string().nullable(),
  position: z.number().int(),
  type: z.enum(WIDGET_TYPES),
  title: z.string(),
  settings: z.record(z.string(), z.unknown()),
  updatedAt: z.string(),
});

export const AreaView = z.object({ key: z.string(), name: z.string(), description: z.string(), widgets: z.array(WidgetView), updatedAt: z.string() });

export const toWidgetView = (w: WidgetDoc): z.infer<typeof WidgetView> => ({
  id: w._id,
  area: w.area,
  position: w.position,
  type: w.type,
  title: w.title,
  settings: w.settings,
  updatedAt: w.updatedAt.toISOString(),
});

export async function toAreaViews(ctx: OperationContext, areas: AreaDoc[]): Promise<z.infer<typeof AreaView>[]> {
  const keys = areas.map((a) => a.key);
  const widgets = keys.length
    ? await widgetsCollection(ctx)
        .find({ siteId: ctx.site._id, area: { $in: keys } })
        .limit(5000)
        .toArray()
    : [];
  widgets.sort((a, b) => a.position - b.position || a._id.localeCompare(b._id));
  return areas.map((a) => ({
    key: a.key,
    name: a.name,
    description: a.description,
    widgets: widgets.filter((w) => w.area === a.key).map(toWidgetView),
    updatedAt: a.updatedAt.toISOString(),
  }));
}

export async function requireArea(ctx: OperationContext, key: string): Promise<AreaDoc> {
  const area = await areasCollection(ctx).findOne({ siteId: ctx.site._id, key });
  if (!area) throw new NotFoundError('Widget area not found');
  return area;
}

/** The next position at the end of an area. */
export async function endOf(ctx: OperationContext, area: string | null): Promise<number> {
  const last = await widgetsCollection(ctx).find({ siteId: ctx.site._id, area }).sort({ position: -1 }).limit(1).toArray();
  return last.length ? last[0].position + 1 : 0;
}
