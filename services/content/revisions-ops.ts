import { ENTRY_SCOPE } from './model.ts';
import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { NotFoundError } from '../core/errors.ts';
import { contentCollections, EntryStatusSchema, type RevisionDoc } from './model.ts';
import { findEntryInScope, revisionOf } from './entries.ts';
import { PageInfo, manageLimit } from '../core/paging.ts';

const RevisionSummary = z.object({
  id: z.string(),
  entryId: z.string(),
  version: z.number().int(),
  title: z.string(),
  slug: z.string(),
  status: EntryStatusSchema,
  author: z.string().nullable(),
  createdAt: z.string(),
  /** Why the system wrote this state (a late scheduled date, a term deletion); null for a person's edit. */
  note: z.string().nullable(),
});

const RevisionView = RevisionSummary.extend({
  excerpt: z.string().nullable(),
  blocks: z.object({ version: z.literal(1), blocks: z.array(z.unknown()) }),
  fields: z.record(z.string(), z.unknown()),
});

/** Revision ids are the entry version (`3`), unique within the entry. */
const summary = (r: RevisionDoc) => ({
  id: String(r.version),
  entryId: r.entryId,
  version: r.version,
  title: r.title,
  slug: r.slug,
  status: r.status,
  author: r.authorId,
  createdAt: r.createdAt.toISOString(),
  note: r.note ?? null,
});

export const listRevisionsOp = defineOperation({
  id: 'content.revisions.list',
  surface: 'manage',
  method: 'GET',
  path: '/content/:id/revisions',
  summary: 'Revision history (newest first, without block bodies)',
  requires: 'content:revisions:read',
  scope: ENTRY_SCOPE,
  input: z.object({ id: z.string(), limit: manageLimit, cursor: z.string().optional() }),
  output: z.object({
    data: z.array(RevisionSummary),
    page: PageInfo,
  }),
  async handler(ctx, { id, limit, cursor }) {
    const entry = await findEntryInScope(ctx, id);
    const list = `revisions:${id}:${ctx.site._id}`;
    const before = cursor ? Number(ctx.services.cursors.decode(list, cursor).before) : entry.version + 1;
    const rows: RevisionDoc[] = await contentCollections(ctx.db)
      .revisions.find({ siteId: ctx.site._id, entryId: id, version: { $lt: before } }, { projection: { blocks: 0 } })
      .sort({ version: -1 })
      .limit(limit + 1)
      .toArray();
    // The entry's current state is its newest revision (an entry written before `changedBy` has a row of it too).
    if (before > entry.version && rows[0]?.version !== entry.version) rows.unshift(revisionOf(entry));
    const items = rows.slice(0, limit);
    const nextCursor = rows.length > limit ? ctx.services.cursors.encode(list, { before: items[items.length - 1].version }) : null;
    return { data: items.map(summary), page: { limit, cursor: cursor ?? null, nextCursor, total: items.length } };
  },
});

export const getRevisionOp = defineOperation({
  id: 'content.revisions.get',
  surface: 'manage',
  method: 'GET',
  path: '/content/:id/revisions/:revisionId',
  summary: 'One revision including its block body',
  requires: 'content:revisions:read',
  scope: ENTRY_SCOPE,
  input: z.object({ id: z.string(), revisionId: z.string() }),
  output: RevisionView,
  async handler(ctx, { id, revisionId }) {
    const entry = await findEntryInScope(ctx, id);
    const version = Number(revisionId);
    if (!Number.isInteger(version)) throw new NotFoundError();
    const revision =
      (await contentCollections(ctx.db).revisions.findOne({ _id: `${id}:${version}`, siteId: ctx.site._id })) ??
      (version === entry.version ? revisionOf(entry) : null);
    if (!revision) throw new NotFoundError();
    return { ...summary(revision), excerpt: revision.excerpt, blocks: revision.blocks, fields: revision.fields };
  },
});
