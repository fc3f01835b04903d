import { z } from 'zod';
import { ListQuery, pageEnvelope, pageInOrder } from '../core/paging.ts';
import { defineOperation } from '../core/operation.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { isDuplicateKey } from '../core/mongo-errors.ts';
import { ENTRY_SCOPE } from './model.ts';
import { removeTerm } from './term-removal-job.ts';
import {
  listTaxonomies,
  requireTaxonomy,
  taxonomyCollections,
  TaxonomyView,
  toTaxonomyView,
  TERM_REMOVAL_DESCRIPTION,
  TermRemovalAnswer,
} from './taxonomies.ts';

const taxonomySlug = z.string().regex(/^[a-z][a-z0-9_-]{0,63}$/, 'lower-case letters, digits, - and _ only');

export const listTaxonomiesOp = defineOperation({
  id: 'taxonomies.list',
  surface: 'manage',
  method: 'GET',
  path: '/taxonomies',
  summary: 'Categories, tags and custom taxonomies with the content types using each',
  requires: 'content:read',
  scope: 'none',
  input: ListQuery,
  output: pageEnvelope(TaxonomyView),
  async handler(ctx, query) {
    const { items, page } = pageInOrder(ctx, 'taxonomies', (await listTaxonomies(ctx)).map(toTaxonomyView), (taxonomy) => taxonomy.slug, query);
    return { data: items, page };
  },
});

export const getTaxonomyOp = defineOperation({
  id: 'taxonomies.get',
  surface: 'manage',
  method: 'GET',
  path: '/taxonomies/:slug',
  summary: 'One taxonomy',
  requires: 'content:read',
  scope: 'none',
  input: z.object({ slug: z.string() }),
  output: TaxonomyView,
  async handler(ctx, { slug }) {
    return toTaxonomyView(await requireTaxonomy(ctx, slug));
  },
});

export const createTaxonomyOp = defineOperation({
  id: 'taxonomies.create',
  surface: 'manage',
  method: 'POST',
  path: '/taxonomies',
  summary: 'Create a custom taxonomy',
  requires: 'settings:manage',
  errors: [409],
  status: 201,
  input: z.object({
    slug: taxonomySlug,
    label: z.string().min(1).max(200),
    description: z.string().max(2000).default(''),
    hierarchical: z.boolean().default(false),
    types: z.array(z.string()).max(100).default([]),
  }),
  output: TaxonomyView,
  async handler(ctx, input) {
    const doc = { _id: newId(), siteId: ctx.site._id, ...input, builtin: false, createdAt: ctx.services.clock.now() };
    try {
      await taxonomyCollections(ctx).taxonomies.insertOne(doc);
    } catch (error) {
      if (isDuplicateKey(error)) throw new ConflictError('A taxonomy with this slug exists');
      throw error;
    }
    return toTaxonomyView(doc);
  },
});

export const updateTaxonomyOp = defineOperation({
  id: 'taxonomies.update',
  surface: 'manage',
  method: 'PATCH',
  path: '/taxonomies/:slug',
  summary: 'Change label, description, nesting or the content types using a taxonomy',
  requires: 'settings:manage',
  input: z.object({
    slug: z.string(),
    label: z.string().min(1).max(200).optional(),
    description: z.string().max(2000).optional(),
    hierarchical: z.boolean().optional(),
    types: z.array(z.string()).max(100).optional(),
  }),
  output: TaxonomyView,
  async handler(ctx, { slug, ...changes }) {
    const set = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined));
    if (changes.hierarchical === false) {
      const nested = await taxonomyCollections(ctx).terms.findOne({ siteId: ctx.site._id, taxonomy: slug, parentId: { $ne: null } });
      if (nested) throw new BadRequestError('hierarchical: terms are nested; flatten them first');
    }
    const doc = await taxonomyCollections(ctx).taxonomies.findOneAndUpdate({ siteId: ctx.site._id, slug }, { $set: set }, { returnDocument: 'after' });
    if (!doc) throw new NotFoundError('Taxonomy not found');
    return toTaxonomyView(doc);
  },
});

export const deleteTaxonomyOp = defineOperation({
  id: 'taxonomies.delete',
  surface: 'manage',
  method: 'DELETE',
  path: '/taxonomies/:slug',
  summary: 'Delete a custom taxonomy, its terms, and its assignments on entries',
  description: TERM_REMOVAL_DESCRIPTION,
  requires: 'settings:manage',
  // The entries it changes must all be inside a scoped key's reach, or nothing is deleted.
  scope: ENTRY_SCOPE,
  events: ['content.updated'],
  input: z.object({ slug: z.string() }),
  output: TermRemovalAnswer,
  async handler(ctx, { slug }) {
    const taxonomy = await requireTaxonomy(ctx, slug);
    if (taxonomy.builtin) throw new BadRequestError('Built-in taxonomies cannot be deleted');
    return removeTerm(ctx, { taxonomy: slug, termId: null, label: slug });
  },
});
