import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { BadRequestError } from '../core/errors.ts';
import { loadLanguages, type LanguagesDoc } from '../languages/languages.ts';
import { BlockDocumentInput } from './model.ts';
import { FreeFormObject } from '../core/safe-keys.ts';

export const SlugSchema = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'lower-case letters, digits and single dashes only')
  .max(200);

export const FieldsInput = FreeFormObject;

/** Content input (contract 2.2). */
export const EntryCreateInput = z.object({
  title: z.string().trim().min(1).max(500),
  type: z.string().default('post'),
  slug: SlugSchema.optional(),
  excerpt: z.string().max(5000).optional(),
  locale: z.string().optional(),
  blocks: BlockDocumentInput.optional(),
  fields: FieldsInput.optional(),
});

/** Which header an entry shows (`PUT /content/{id}/header-ref`, and the import's lines). */
export const HeaderRefInput = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('library'), name: z.string().min(1).max(200) }),
  z.object({ mode: z.literal('default') }),
  z.object({ mode: z.literal('none') }),
]);

/** Content update (contract 2.3). */
export const EntryUpdateInput = z.object({
  id: z.string(),
  title: z.string().trim().min(1).max(500).optional(),
  slug: SlugSchema.optional(),
  excerpt: z.string().max(5000).nullable().optional(),
  blocks: BlockDocumentInput.optional(),
  fields: FieldsInput.optional().describe('Merged into the current values; a null value removes that field'),
  status: z.enum(['draft', 'published', 'archived', 'scheduled']).optional(),
  expectedVersion: z.number().int().min(0).optional(),
});

/** The locale of a new entry: a language the site has, or the site default when omitted. */
export async function entryLocale(ctx: OperationContext, requested: string | undefined): Promise<string> {
  return localeAmong(await loadLanguages(ctx), requested);
}

/** `entryLocale` over languages already read (a batch of entries reads them once). */
export function localeAmong(languages: LanguagesDoc, requested: string | undefined): string {
  if (!requested) return languages.defaultCode;
  const known = languages.languages.find((l) => l.code.toLowerCase() === requested.toLowerCase());
  if (!known) throw new BadRequestError(`locale: unknown language "${requested}"`);
  return known.code;
}

/** Merges a fields patch: keys with null are removed, others replaced. */
export function mergeFields(current: Record<string, unknown>, patch: Record<string, unknown> | undefined) {
  if (!patch) return current;
  const merged = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}
