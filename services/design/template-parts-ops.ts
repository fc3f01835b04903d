import { z } from 'zod';
import { ListQuery, pageEnvelope, pageInOrder } from '../core/paging.ts';
import { defineOperation } from '../core/operation.ts';
import type { OperationContext } from '../core/context.ts';
import { BadRequestError, NotFoundError } from '../core/errors.ts';
import { SlugSchema } from '../content/entry-input.ts';
import { BlockDocumentInput, BlockDocumentSchema, emptyBlocks } from '../content/model.ts';
import { listDesign, readDesign, writeDesign, type DesignDoc } from './store.ts';

export const PART_AREAS = ['header', 'footer', 'sidebar', 'general'] as const;

const PartValue = z.object({ area: z.enum(PART_AREAS), title: z.string().trim().min(1).max(200), blocks: BlockDocumentSchema });
type PartValue = z.infer<typeof PartValue>;

export const PartView = PartValue.extend({ part: z.string(), customized: z.boolean(), updatedAt: z.string().nullable() });

/** The theme ships a `header` and a `footer`; every other part exists once someone saves it. */
export const THEME_PARTS: Record<string, PartValue> = {
  header: { area: 'header', title: 'Header', blocks: { version: 1, blocks: [{ type: 'site-title' }, { type: 'navigation', menu: 'primary' }] } },
  footer: { area: 'footer', title: 'Footer', blocks: { version: 1, blocks: [{ type: 'paragraph', text: '' }] } },
};

export const toPartView = (part: string, doc: DesignDoc<PartValue> | null) => {
  const value = doc?.value ?? THEME_PARTS[part];
  return { part, ...value, customized: doc !== null, updatedAt: doc ? doc.updatedAt.toISOString() : null };
};

export async function allParts(ctx: OperationContext) {
  const saved = await listDesign<PartValue>(ctx, 'template-part');
  const byKey = new Map(saved.map((d) => [d.key, d]));
  const keys = [...new Set([...Object.keys(THEME_PARTS), ...byKey.keys()])].sort();
  return keys.map((k) => toPartView(k, byKey.get(k) ?? null));
}

export const getTemplatePartOp = defineOperation({
  id: 'templateParts.get',
  surface: 'manage',
  method: 'GET',
  path: '/template-parts/:part',
  summary: 'One template part (header, footer, sidebar or general)',
  requires: 'content:read',
  scope: 'none',
  input: z.object({ part: z.string() }),
  output: PartView,
  async handler(ctx, { part }) {
    const doc = await readDesign<PartValue>(ctx, 'template-part', part);
    if (!doc && !THEME_PARTS[part]) throw new NotFoundError('Template part not found');
    return toPartView(part, doc);
  },
});

export const putTemplatePartOp = defineOperation({
  id: 'templateParts.put',
  surface: 'manage',
  method: 'PUT',
  path: '/template-parts/:part',
  summary: 'Create or replace a template part; a part in the `header` area joins the header library',
  requires: 'settings:manage',
  input: PartValue.extend({ part: SlugSchema.max(100), blocks: BlockDocumentInput.default(emptyBlocks) }),
  output: PartView,
  async handler(ctx, { part, ...value }) {
    const settings = await readDesign<HeaderSettings>(ctx, 'header-settings', 'default');
    // The site default header must stay a header.
    if (settings?.value.default === part && value.area !== 'header') throw new BadRequestError('area: this part is the site default header');
    return toPartView(part, await writeDesign(ctx, 'template-part', part, value));
  },
});

export interface HeaderSettings {
  default: string;
}

export const listHeadersOp = defineOperation({
  id: 'headers.list',
  surface: 'manage',
  method: 'GET',
  path: '/headers',
  summary: 'The header library (template parts in the header area) and the site default header',
  requires: 'content:read',
  scope: 'none',
  input: ListQuery,
  output: pageEnvelope(PartView).extend({ default: z.string() }),
  async handler(ctx, query) {
    const settings = await readDesign<HeaderSettings>(ctx, 'header-settings', 'default');
    const { items, page } = pageInOrder(
      ctx,
      'headers',
      (await allParts(ctx)).filter((p) => p.area === 'header'),
      (part) => part.part,
      query,
    );
    return { default: settings?.value.default ?? 'header', data: items, page };
  },
});

export const putHeadersOp = defineOperation({
  id: 'headers.put',
  surface: 'manage',
  method: 'PUT',
  path: '/headers',
  summary: 'Choose the site default header from the library',
  requires: 'settings:manage',
  input: z.object({ default: z.string().min(1).max(100) }),
  output: z.object({ default: z.string(), data: z.array(PartView) }),
  async handler(ctx, input) {
    const headers = (await allParts(ctx)).filter((p) => p.area === 'header');
    if (!headers.some((h) => h.part === input.default)) throw new BadRequestError('default: no header with this name in the library');
    await writeDesign<HeaderSettings>(ctx, 'header-settings', 'default', { default: input.default });
    return { default: input.default, data: headers };
  },
});

export const templatePartOperations = [getTemplatePartOp, putTemplatePartOp, listHeadersOp, putHeadersOp];
