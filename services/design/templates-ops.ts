import { z } from 'zod';
import { ListQuery, pageEnvelope, pageInOrder } from '../core/paging.ts';
import { defineOperation } from '../core/operation.ts';
import type { OperationContext } from '../core/context.ts';
import { NotFoundError } from '../core/errors.ts';
import { BlockDocumentInput, BlockDocumentSchema, type BlockDocument } from '../content/model.ts';
import { deleteDesign, listDesign, readDesign, writeDesign, type DesignDoc } from './store.ts';

/** The template hierarchy slots the theme fills (WordPress names), plus per-type and per-slug variants. */
export const BUILTIN_TEMPLATES = [
  'index',
  'home',
  'front-page',
  'single',
  'page',
  'archive',
  'category',
  'tag',
  'taxonomy',
  'author',
  'date',
  'search',
  '404',
] as const;
const TemplateSlug = z
  .string()
  .regex(
    /^(?:index|home|front-page|single|page|archive|category|tag|taxonomy|author|date|search|404)(?:-[a-z0-9]+(?:-[a-z0-9]+)*)?$/,
    'a template hierarchy slot such as single, page-about or archive-product',
  )
  .max(120);

const Layout = z.object({ title: z.string().trim().min(1).max(200), blocks: BlockDocumentSchema });
export type TemplateLayout = z.infer<typeof Layout>;
type Layout = TemplateLayout;

/** A saved customization: what visitors get (`live`, null = theme default) and unpublished work (`draft`). */
export interface TemplateValue {
  live: Layout | null;
  draft: (Layout & { savedAt: string }) | null;
}

export const themeDefault = (slug: string): Layout => ({
  title: slug,
  blocks: {
    version: 1,
    blocks: [
      { type: 'template-part', part: 'header' },
      { type: slug.startsWith('single') || slug.startsWith('page') ? 'post-content' : 'query-loop' },
      { type: 'template-part', part: 'footer' },
    ],
  } as BlockDocument,
});

export const TemplateView = z.object({
  slug: z.string(),
  title: z.string(),
  blocks: BlockDocumentSchema,
  source: z.enum(['theme', 'custom']),
  draft: Layout.extend({ savedAt: z.string() }).nullable(),
  updatedAt: z.string().nullable(),
});

export function toTemplateView(slug: string, doc: DesignDoc<TemplateValue> | null): z.infer<typeof TemplateView> {
  const live = doc?.value.live ?? themeDefault(slug);
  return { slug, ...live, source: doc?.value.live ? 'custom' : 'theme', draft: doc?.value.draft ?? null, updatedAt: doc ? doc.updatedAt.toISOString() : null };
}

export async function loadTemplate(ctx: OperationContext, slug: string) {
  const doc = await readDesign<TemplateValue>(ctx, 'template', slug);
  if (!doc && !(BUILTIN_TEMPLATES as readonly string[]).includes(slug)) throw new NotFoundError('Template not found');
  return doc;
}

export const listTemplatesOp = defineOperation({
  id: 'templates.list',
  surface: 'manage',
  method: 'GET',
  path: '/templates',
  summary: 'Template hierarchy slots: built-in ones and saved variants, with source and draft state',
  requires: 'content:read',
  scope: 'none',
  input: ListQuery,
  output: pageEnvelope(TemplateView.omit({ blocks: true, draft: true }).extend({ hasDraft: z.boolean() })),
  async handler(ctx, query) {
    const saved = new Map((await listDesign<TemplateValue>(ctx, 'template')).map((d) => [d.key, d]));
    const { items: slugs, page } = pageInOrder(ctx, 'templates', [...new Set([...BUILTIN_TEMPLATES, ...saved.keys()])], (slug) => slug, query);
    return {
      page,
      data: slugs.map((slug) => {
        const { blocks: _blocks, draft, ...rest } = toTemplateView(slug, saved.get(slug) ?? null);
        return { ...rest, hasDraft: draft !== null };
      }),
    };
  },
});

export const getTemplateOp = defineOperation({
  id: 'templates.get',
  surface: 'manage',
  method: 'GET',
  path: '/templates/:slug',
  summary: 'One template: what visitors get and the unpublished draft',
  requires: 'content:read',
  scope: 'none',
  input: z.object({ slug: z.string() }),
  output: TemplateView,
  async handler(ctx, { slug }) {
    return toTemplateView(slug, await loadTemplate(ctx, slug));
  },
});

export const putTemplateOp = defineOperation({
  id: 'templates.put',
  surface: 'manage',
  method: 'PUT',
  path: '/templates/:slug',
  summary: 'Save a draft of a template; `publish: true` makes it live at once',
  requires: 'settings:manage',
  input: Layout.extend({ slug: TemplateSlug, blocks: BlockDocumentInput, publish: z.boolean().default(false) }),
  output: TemplateView,
  async handler(ctx, { slug, publish, ...layout }) {
    const current = (await readDesign<TemplateValue>(ctx, 'template', slug))?.value ?? { live: null, draft: null };
    const value: TemplateValue = publish
      ? { live: layout, draft: null }
      : { live: current.live, draft: { ...layout, savedAt: ctx.services.clock.now().toISOString() } };
    return toTemplateView(slug, await writeDesign(ctx, 'template', slug, value));
  },
});

export const deleteTemplateOp = defineOperation({
  id: 'templates.delete',
  surface: 'manage',
  method: 'DELETE',
  path: '/templates/:slug',
  summary: 'Discard the draft (`?discard=draft`) or reset the slot to the theme default (the default)',
  requires: 'settings:manage',
  input: z.object({ slug: z.string(), discard: z.enum(['draft', 'all']).default('all') }),
  output: TemplateView,
  async handler(ctx, { slug, discard }) {
    const doc = await loadTemplate(ctx, slug);
    if (discard === 'all' || !doc?.value.live) {
      await deleteDesign(ctx, 'template', slug);
      return toTemplateView(slug, null);
    }
    return toTemplateView(slug, await writeDesign(ctx, 'template', slug, { ...doc.value, draft: null }));
  },
});

export const templateOperations = [listTemplatesOp, getTemplateOp, putTemplateOp, deleteTemplateOp];
