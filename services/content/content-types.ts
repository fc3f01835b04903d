import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { BadRequestError } from '../core/errors.ts';
import { contentCollections, type FieldDefinition } from './model.ts';
import { SAFE_URL_RULE, safeUrl } from '../core/safe-url.ts';

/** A content type as the APIs show it (contract 2.6). */
export const ContentTypeView = z.object({
  slug: z.string(),
  label: z.string(),
  description: z.string(),
  builtin: z.boolean(),
  fields: z.array(
    z.object({
      name: z.string(),
      label: z.string().optional(),
      kind: z.string(),
      required: z.boolean(),
      options: z.array(z.string()).optional(),
      maxLength: z.number().optional(),
      min: z.number().optional(),
      max: z.number().optional(),
    }),
  ),
});
export type ContentTypeView = z.infer<typeof ContentTypeView>;

/** Built-in types live in code: every site has them and nobody can change or delete them. */
export const BUILTIN_TYPES: readonly ContentTypeView[] = [
  { slug: 'post', label: 'Posts', description: 'Time-ordered articles.', builtin: true, fields: [] },
  { slug: 'page', label: 'Pages', description: 'Standalone pages.', builtin: true, fields: [] },
];

export const isBuiltinType = (slug: string) => BUILTIN_TYPES.some((t) => t.slug === slug);

export async function listContentTypes(ctx: OperationContext): Promise<ContentTypeView[]> {
  const custom = await contentCollections(ctx.db).types.find({ siteId: ctx.site._id }).sort({ slug: 1 }).limit(500).toArray();
  return [...BUILTIN_TYPES, ...custom.map((t) => ({ slug: t.slug, label: t.label, description: t.description, builtin: false, fields: t.fields }))];
}

export async function findContentType(ctx: OperationContext, slug: string): Promise<ContentTypeView | null> {
  const builtin = BUILTIN_TYPES.find((t) => t.slug === slug);
  if (builtin) return builtin;
  const doc = await contentCollections(ctx.db).types.findOne({ siteId: ctx.site._id, slug });
  return doc ? { slug: doc.slug, label: doc.label, description: doc.description, builtin: false, fields: doc.fields } : null;
}

/** The type of an entry being written; unknown is a 400 (contract 2.2). */
export async function requireContentType(ctx: OperationContext, slug: string): Promise<ContentTypeView> {
  const type = await findContentType(ctx, slug);
  if (!type) throw new BadRequestError(`type: unknown content type "${slug}"`);
  return type;
}

function fieldSchema(field: FieldDefinition): z.ZodType {
  switch (field.kind) {
    case 'string':
    case 'text':
      return field.maxLength ? z.string().max(field.maxLength) : z.string();
    case 'url':
      // z.url() alone takes any scheme the URL parser does (javascript:, data:).
      return z.url().refine((v) => safeUrl(v) !== null, SAFE_URL_RULE);
    case 'number':
    case 'integer': {
      let schema = field.kind === 'integer' ? z.number().int() : z.number();
      if (field.min !== undefined) schema = schema.min(field.min);
      if (field.max !== undefined) schema = schema.max(field.max);
      return schema;
    }
    case 'boolean':
      return z.boolean();
    case 'date':
      return z.iso.datetime({ offset: true }).or(z.iso.date());
    case 'select':
      return z.enum((field.options ?? []) as [string, ...string[]]);
    case 'list':
      return z.array(z.unknown());
    case 'object':
      return z.record(z.string(), z.unknown());
  }
}

/**
 * Checks custom field values against the type's schema on every write. Fields the schema does not
 * declare are kept as they are (the contract allows additional properties); `null` clears an
 * optional field. The error names the field.
 */
export function validateFields(type: ContentTypeView, values: Record<string, unknown>): void {
  for (const field of type.fields as FieldDefinition[]) {
    const value = values[field.name];
    if (value === undefined || value === null) {
      if (field.required) throw new BadRequestError(`fields.${field.name}: required`);
      continue;
    }
    const result = fieldSchema(field).safeParse(value);
    if (!result.success) throw new BadRequestError(`fields.${field.name}: ${result.error.issues[0].message}`);
  }
}
