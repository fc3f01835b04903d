import { z } from 'zod';
import { NotFoundError } from '../core/errors.ts';
import { BlockDocumentSchema } from '../content/model.ts';
import { definePublicOperation } from '../public-read/runner.ts';
import { readDesign } from './store.ts';
import { PartView, THEME_PARTS, allParts, toPartView, type HeaderSettings } from './template-parts-ops.ts';
import { loadTemplate, toTemplateView } from './templates-ops.ts';
import { areasCollection, toAreaViews, WidgetView } from './widgets.ts';
import { LayoutView, readLayout } from './widget-layout-ops.ts';
import { DEFAULT_PERMALINKS, type Permalinks } from '../core/permalinks.ts';

/**
 * The site's design for headless frontends (Public API, anonymous, GET): what visitors get, never
 * drafts. Answers are cached under the site's public generation, which every design write moves
 * (design/feature.ts), so the next read after a change shows it.
 */

export const publicHeadersOp = definePublicOperation({
  id: 'public.design.headers',
  path: '/design/headers',
  summary: 'The header library (template parts in the header area) and the site default header',
  input: z.object({}),
  output: z.object({ default: z.string(), headers: z.array(PartView) }),
  async handler(ctx) {
    const settings = await readDesign<HeaderSettings>(ctx, 'header-settings', 'default');
    return { default: settings?.value.default ?? 'header', headers: (await allParts(ctx)).filter((p) => p.area === 'header') };
  },
});

export const publicTemplatePartsOp = definePublicOperation({
  id: 'public.design.templateParts',
  path: '/design/template-parts',
  summary: "Every template part (header, footer, sidebar, general), the theme's until customized",
  input: z.object({}),
  output: z.object({ parts: z.array(PartView) }),
  async handler(ctx) {
    return { parts: await allParts(ctx) };
  },
});

export const publicTemplatePartOp = definePublicOperation({
  id: 'public.design.templatePart',
  path: '/design/template-parts/:part',
  summary: 'One template part',
  input: z.object({ part: z.string().max(100) }),
  output: PartView,
  async handler(ctx, { part }) {
    const doc = await readDesign<z.infer<typeof PartView>>(ctx, 'template-part', part);
    if (!doc && !THEME_PARTS[part]) throw new NotFoundError('Template part not found');
    return toPartView(part, doc as never);
  },
});

export const publicTemplateOp = definePublicOperation({
  id: 'public.design.template',
  path: '/design/templates/:id',
  summary: 'The live version of a template hierarchy slot (`single`, `page-about`, …); drafts are never shown',
  input: z.object({ id: z.string().max(120) }),
  output: z.object({ slug: z.string(), title: z.string(), blocks: BlockDocumentSchema, source: z.enum(['theme', 'custom']), updatedAt: z.string().nullable() }),
  async handler(ctx, { id }) {
    const { draft: _draft, ...live } = toTemplateView(id, await loadTemplate(ctx, id));
    return live;
  },
});

export const publicWidgetsOp = definePublicOperation({
  id: 'public.design.widgets',
  path: '/design/widgets',
  summary: 'Widget areas with their widgets in order, and which areas each content type shows',
  input: z.object({}),
  output: LayoutView.extend({ areas: z.array(z.object({ key: z.string(), name: z.string(), description: z.string(), widgets: z.array(WidgetView) })) }),
  async handler(ctx) {
    const areas = await areasCollection(ctx).find({ siteId: ctx.site._id }).sort({ key: 1 }).limit(500).toArray();
    const views = await toAreaViews(ctx, areas);
    return { layout: await readLayout(ctx), areas: views.map(({ updatedAt: _updatedAt, ...area }) => area) };
  },
});

export const publicPermalinksOp = definePublicOperation({
  id: 'public.design.permalinks',
  path: '/design/permalinks',
  summary: 'The permalink rule: where each entry lives on the site (docs/site-config.md "Permalinks")',
  input: z.object({}),
  output: z.object({ structure: z.string(), categoryBase: z.string(), tagBase: z.string(), typeBases: z.record(z.string(), z.string()) }),
  async handler(ctx) {
    return (await readDesign<Permalinks>(ctx, 'permalinks', 'default'))?.value ?? DEFAULT_PERMALINKS;
  },
});

export const publicDesignOperations = [publicHeadersOp, publicTemplatePartsOp, publicTemplatePartOp, publicTemplateOp, publicWidgetsOp, publicPermalinksOp];
