import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { NotFoundError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { COLLECTIONS } from './model.ts';

export interface TaxonomyDoc {
  _id: string;
  siteId: string;
  slug: string;
  label: string;
  description: string;
  hierarchical: boolean;
  /** Content type slugs whose entries take terms of this taxonomy. */
  types: string[];
  builtin: boolean;
  createdAt: Date;
}

export interface TermDoc {
  _id: string;
  siteId: string;
  taxonomy: string;
  name: string;
  slug: string;
  parentId: string | null;
  createdAt: Date;
}

export const TaxonomyView = z.object({
  slug: z.string(),
  label: z.string(),
  description: z.string(),
  hierarchical: z.boolean(),
  types: z.array(z.string()),
  builtin: z.boolean(),
});

export const TermView = z.object({ id: z.string(), taxonomy: z.string(), name: z.string(), slug: z.string(), parentId: z.string().nullable() });

export const toTaxonomyView = (t: TaxonomyDoc) => ({
  slug: t.slug,
  label: t.label,
  description: t.description,
  hierarchical: t.hierarchical,
  types: t.types,
  builtin: t.builtin,
});
export const toTermView = (t: TermDoc) => ({ id: t._id, taxonomy: t.taxonomy, name: t.name, slug: t.slug, parentId: t.parentId });

export const taxonomyCollections = (ctx: OperationContext) => ({
  taxonomies: ctx.db.collection<TaxonomyDoc>(COLLECTIONS.taxonomies),
  terms: ctx.db.collection<TermDoc>(COLLECTIONS.terms),
});

const BUILTIN_SLUGS = new Set(['category', 'tag']);

export async function requireTaxonomy(ctx: OperationContext, slug: string): Promise<TaxonomyDoc> {
  const { taxonomies } = taxonomyCollections(ctx);
  let doc = await taxonomies.findOne({ siteId: ctx.site._id, slug });
  // Sites added after their workspace was provisioned get the built-ins on first use.
  if (!doc && BUILTIN_SLUGS.has(slug)) {
    await provisionTaxonomies(ctx);
    doc = await taxonomies.findOne({ siteId: ctx.site._id, slug });
  }
  if (!doc) throw new NotFoundError('Taxonomy not found');
  return doc;
}

/** Every taxonomy of the site (built-ins created on first use). */
export async function listTaxonomies(ctx: OperationContext): Promise<TaxonomyDoc[]> {
  const { taxonomies } = taxonomyCollections(ctx);
  const find = () => taxonomies.find({ siteId: ctx.site._id }).sort({ slug: 1 }).limit(500).toArray();
  const rows = await find();
  if (rows.filter((t) => t.builtin).length >= BUILTIN_SLUGS.size) return rows;
  await provisionTaxonomies(ctx);
  return find();
}

/** Every site starts with categories (nested) and tags (flat), both for posts. */
export async function provisionTaxonomies(ctx: OperationContext): Promise<void> {
  const { taxonomies } = taxonomyCollections(ctx);
  const now = ctx.services.clock.now();
  const builtins = [
    { slug: 'category', label: 'Categories', description: 'Nested topics.', hierarchical: true, types: ['post'] },
    { slug: 'tag', label: 'Tags', description: 'Flat keywords.', hierarchical: false, types: ['post'] },
  ];
  for (const t of builtins) {
    await taxonomies.updateOne(
      { siteId: ctx.site._id, slug: t.slug },
      { $setOnInsert: { _id: newId(), ...t, builtin: true, createdAt: now } },
      { upsert: true },
    );
  }
}

/** What deleting a term or a taxonomy answers (content/term-removal.ts). */
export const TermRemovalAnswer = z.object({
  deleted: z.boolean(),
  entriesChanged: z.number().int(),
  /** The Temporal job's id when the deletion touched more than 100 entries; null when done inline. */
  job: z.string().nullable(),
});

export const TERM_REMOVAL_DESCRIPTION =
  'Every entry that has it is changed through the write path (version, revision, `content.updated`). Refused with nothing ' +
  'changed when one of them is outside a scoped key. Over 100 entries it runs as a durable job: `deleted: false` with the ' +
  '`job` id means it is still running (repeating the request joins it).';
