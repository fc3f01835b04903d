import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import type { OperationContext } from '../core/context.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { isDuplicateKey } from '../core/mongo-errors.ts';
import { ENTRY_SCOPE } from './model.ts';
import { removeTerm } from './term-removal-job.ts';
import { TERM_REMOVAL_DESCRIPTION, TermRemovalAnswer } from './taxonomies.ts';
import { SlugSchema } from './entry-input.ts';
import { slugify } from './entries.ts';
import { requireTaxonomy, taxonomyCollections, toTermView, TermView, type TaxonomyDoc, type TermDoc } from './taxonomies.ts';
import { PageInfo, decodeAfterId, manageLimit, pageOf } from '../core/paging.ts';

async function requireTerm(ctx: OperationContext, taxonomy: string, id: string): Promise<TermDoc> {
  const term = await taxonomyCollections(ctx).terms.findOne({ _id: id, siteId: ctx.site._id, taxonomy });
  if (!term) throw new NotFoundError('Term not found');
  return term;
}

/** A parent must be a term of the same nested taxonomy, and never the term itself or one of its descendants. */
async function checkParent(ctx: OperationContext, taxonomy: TaxonomyDoc, parentId: string | null, termId?: string): Promise<void> {
  if (!parentId) return;
  if (!taxonomy.hierarchical) throw new BadRequestError('parentId: this taxonomy is not hierarchical');
  let cursor: string | null = parentId;
  for (let depth = 0; cursor; depth++) {
    if (cursor === termId || depth > 100) throw new BadRequestError('parentId: would create a cycle');
    const parent: TermDoc | null = await taxonomyCollections(ctx).terms.findOne({ _id: cursor, siteId: ctx.site._id, taxonomy: taxonomy.slug });
    if (!parent) throw new BadRequestError('parentId: no such term in this taxonomy');
    cursor = parent.parentId;
  }
}

const slugConflict = (error: unknown) => {
  if (isDuplicateKey(error)) return new ConflictError('A term with this slug exists in this taxonomy');
  return error;
};

export const listTermsOp = defineOperation({
  id: 'terms.list',
  surface: 'manage',
  method: 'GET',
  path: '/taxonomies/:slug/terms',
  summary: 'Terms of a taxonomy (newest first)',
  requires: 'content:read',
  scope: 'none',
  input: z.object({ slug: z.string(), limit: manageLimit, cursor: z.string().optional() }),
  output: z.object({
    data: z.array(TermView),
    page: PageInfo,
  }),
  async handler(ctx, { slug, limit, cursor }) {
    await requireTaxonomy(ctx, slug);
    const after = decodeAfterId(ctx, `terms:${slug}`, cursor);
    const rows = await taxonomyCollections(ctx)
      .terms.find({ siteId: ctx.site._id, taxonomy: slug, ...(after ? { _id: { $lt: after } } : {}) })
      .sort({ _id: -1 })
      .limit(limit + 1)
      .toArray();
    const { items, nextCursor } = pageOf(ctx, `terms:${slug}`, rows, limit);
    return { data: items.map(toTermView), page: { limit, cursor: cursor ?? null, nextCursor, total: items.length } };
  },
});

export const getTermOp = defineOperation({
  id: 'terms.get',
  surface: 'manage',
  method: 'GET',
  path: '/taxonomies/:slug/terms/:id',
  summary: 'One term',
  requires: 'content:read',
  scope: 'none',
  input: z.object({ slug: z.string(), id: z.string() }),
  output: TermView,
  async handler(ctx, { slug, id }) {
    return toTermView(await requireTerm(ctx, slug, id));
  },
});

export const createTermOp = defineOperation({
  id: 'terms.create',
  surface: 'manage',
  method: 'POST',
  path: '/taxonomies/:slug/terms',
  summary: 'Add a term (optionally under a parent)',
  requires: 'content:publish',
  scope: 'none',
  errors: [409],
  status: 201,
  input: z.object({
    slug: z.string(),
    name: z.string().trim().min(1).max(200),
    termSlug: SlugSchema.optional(),
    parentId: z.string().nullable().default(null),
  }),
  output: TermView,
  async handler(ctx, { slug, name, termSlug, parentId }) {
    const taxonomy = await requireTaxonomy(ctx, slug);
    await checkParent(ctx, taxonomy, parentId);
    const doc: TermDoc = {
      _id: newId(),
      siteId: ctx.site._id,
      taxonomy: slug,
      name,
      slug: termSlug ?? slugify(name),
      parentId,
      createdAt: ctx.services.clock.now(),
    };
    await taxonomyCollections(ctx)
      .terms.insertOne(doc)
      .catch((error) => {
        throw slugConflict(error);
      });
    return toTermView(doc);
  },
});

export const updateTermOp = defineOperation({
  id: 'terms.update',
  surface: 'manage',
  method: 'PATCH',
  path: '/taxonomies/:slug/terms/:id',
  summary: 'Rename, re-slug or move a term',
  requires: 'content:publish',
  scope: 'none',
  errors: [409],
  input: z.object({
    slug: z.string(),
    id: z.string(),
    name: z.string().trim().min(1).max(200).optional(),
    termSlug: SlugSchema.optional(),
    parentId: z.string().nullable().optional(),
  }),
  output: TermView,
  async handler(ctx, { slug, id, name, termSlug, parentId }) {
    const taxonomy = await requireTaxonomy(ctx, slug);
    await requireTerm(ctx, slug, id);
    if (parentId !== undefined) await checkParent(ctx, taxonomy, parentId, id);
    const set: Partial<TermDoc> = {};
    if (name !== undefined) set.name = name;
    if (termSlug !== undefined) set.slug = termSlug;
    if (parentId !== undefined) set.parentId = parentId;
    const doc = await taxonomyCollections(ctx)
      .terms.findOneAndUpdate({ _id: id, siteId: ctx.site._id, taxonomy: slug }, { $set: set }, { returnDocument: 'after' })
      .catch((error) => {
        throw slugConflict(error);
      });
    if (!doc) throw new NotFoundError('Term not found');
    return toTermView(doc);
  },
});

export const deleteTermOp = defineOperation({
  id: 'terms.delete',
  surface: 'manage',
  method: 'DELETE',
  path: '/taxonomies/:slug/terms/:id',
  summary: 'Delete a term: its children move up to its parent, entries lose it',
  description: TERM_REMOVAL_DESCRIPTION,
  requires: 'content:publish',
  // The entries it changes must all be inside a scoped key's reach, or nothing is deleted.
  scope: ENTRY_SCOPE,
  events: ['content.updated'],
  input: z.object({ slug: z.string(), id: z.string() }),
  output: TermRemovalAnswer,
  async handler(ctx, { slug, id }) {
    const term = await requireTerm(ctx, slug, id);
    return removeTerm(ctx, { taxonomy: slug, termId: id, label: `${slug}/${term.slug}` });
  },
});
