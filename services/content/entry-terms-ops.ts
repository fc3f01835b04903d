import { ENTRY_SCOPE } from './model.ts';
import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { BadRequestError } from '../core/errors.ts';
import type { HeaderRef } from './model.ts';
import { EntryView, toEntryView } from './entry-view.ts';
import { findEntryInScope } from './entries.ts';
import { changeEntryOrFail } from './write-path.ts';
import { listTaxonomies, taxonomyCollections, TermView, toTermView } from './taxonomies.ts';
import { HeaderRefInput } from './entry-input.ts';

export const getEntryTermsOp = defineOperation({
  id: 'content.terms.get',
  surface: 'manage',
  method: 'GET',
  path: '/content/:id/terms',
  summary: 'Categories, tags and custom taxonomy terms of the entry',
  requires: 'content:read',
  scope: ENTRY_SCOPE,
  input: z.object({ id: z.string() }),
  output: z.object({ terms: z.record(z.string(), z.array(TermView)) }),
  async handler(ctx, { id }) {
    const entry = await findEntryInScope(ctx, id);
    const ids = Object.values(entry.terms ?? {}).flat();
    const rows = ids.length
      ? await taxonomyCollections(ctx)
          .terms.find({ siteId: ctx.site._id, _id: { $in: ids } })
          .toArray()
      : [];
    const byId = new Map(rows.map((t) => [t._id, t]));
    const terms = Object.fromEntries(
      Object.entries(entry.terms ?? {}).map(([taxonomy, list]) => [
        taxonomy,
        list.flatMap((termId) => (byId.has(termId) ? [toTermView(byId.get(termId)!)] : [])),
      ]),
    );
    return { terms };
  },
});

export const putEntryTermsOp = defineOperation({
  id: 'content.terms.put',
  surface: 'manage',
  method: 'PUT',
  path: '/content/:id/terms',
  summary: 'Set the terms of some taxonomies; taxonomies left out keep their terms',
  requires: 'content:update',
  scope: ENTRY_SCOPE,
  events: ['content.updated'],
  input: z.object({
    id: z.string(),
    terms: z.record(z.string(), z.array(z.string()).max(500)),
    expectedVersion: z.number().int().min(0).optional(),
  }),
  output: EntryView,
  async handler(ctx, { id, terms, expectedVersion }) {
    const { after } = await changeEntryOrFail(
      ctx,
      id,
      expectedVersion,
      async (current) => {
        const { terms: termRows } = taxonomyCollections(ctx);
        const taxonomies = await listTaxonomies(ctx);
        const next = { ...(current.terms ?? {}) };
        for (const [slug, wanted] of Object.entries(terms)) {
          const taxonomy = taxonomies.find((t) => t.slug === slug);
          if (!taxonomy) throw new BadRequestError(`terms.${slug}: unknown taxonomy`);
          if (!taxonomy.types.includes(current.type)) throw new BadRequestError(`terms.${slug}: not used by type "${current.type}"`);
          const unique = [...new Set(wanted)];
          const found = await termRows.countDocuments({ siteId: ctx.site._id, taxonomy: slug, _id: { $in: unique } });
          if (found !== unique.length) throw new BadRequestError(`terms.${slug}: unknown term id`);
          next[slug] = unique;
        }
        return { terms: next };
      },
      () => ({ events: ['content.updated'] }),
    );
    return toEntryView(after);
  },
});

export const putHeaderRefOp = defineOperation({
  id: 'content.headerRef.put',
  surface: 'manage',
  method: 'PUT',
  path: '/content/:id/header-ref',
  summary: 'Point the entry at a named header from the library, the site default, or none',
  requires: 'content:update',
  scope: ENTRY_SCOPE,
  events: ['content.updated'],
  input: z.object({ id: z.string(), headerRef: HeaderRefInput, expectedVersion: z.number().int().min(0).optional() }),
  output: EntryView,
  async handler(ctx, { id, headerRef, expectedVersion }) {
    const { after } = await changeEntryOrFail(
      ctx,
      id,
      expectedVersion,
      () => ({ headerRef: headerRef as HeaderRef }),
      () => ({ events: ['content.updated'] }),
    );
    return toEntryView(after);
  },
});
