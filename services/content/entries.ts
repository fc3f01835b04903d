import { onlyDuplicateWrites } from '../core/mongo-errors.ts';
import type { OperationContext } from '../core/context.ts';
import { NotFoundError } from '../core/errors.ts';
import { actorUserId } from '../core/principal.ts';
import { contentCollections, ENTRY_SCOPE, type EntryDoc, type LiveSnapshot } from './model.ts';

/** URL-safe slug from a title: lower-case ASCII words joined by `-`. */
export function slugify(text: string): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 96);
  return slug || 'entry';
}

/**
 * The live (not trashed) entry of this site as the caller may see it: 404 if absent or trashed, a
 * generic 401 (`ctx.scope`, the operation's declared scope) if outside the caller's key scope. Reads
 * use it directly; the write path (write-path.ts) reads through it before every change.
 */
export async function findEntryInScope(ctx: OperationContext, id: string): Promise<EntryDoc> {
  const doc = await contentCollections(ctx.db).entries.findOne({ _id: id, siteId: ctx.site._id, trashedAt: null });
  if (!doc) throw new NotFoundError();
  ctx.scope.check(doc, ENTRY_SCOPE);
  return doc;
}

/** The revision of a saved state: what `recordRevision` and `recordRevisions` insert once. */
function revisionFields(ctx: OperationContext, doc: EntryDoc, note: string | undefined) {
  return {
    entryId: doc._id,
    version: doc.version,
    title: doc.title,
    slug: doc.slug,
    status: doc.status,
    excerpt: doc.excerpt,
    blocks: doc.blocks,
    fields: doc.fields,
    authorId: actorUserId(ctx.principal),
    createdAt: doc.updatedAt,
    note: note ?? null,
  };
}

/** Keeps a copy of every saved state. Keyed by entry and version, so a repeated call writes nothing new. */
export async function recordRevision(ctx: OperationContext, doc: EntryDoc, note?: string): Promise<void> {
  await contentCollections(ctx.db).revisions.updateOne(
    { _id: `${doc._id}:${doc.version}`, siteId: doc.siteId },
    { $setOnInsert: revisionFields(ctx, doc, note) },
    { upsert: true },
  );
}

/**
 * `recordRevision` for many entries in one round trip (a bulk create); idempotent the same way: a
 * revision already there is a duplicate `_id`, skipped. An insert, not upserts: an engine that
 * serves only `_id` and unique indexes (the local one) matches each upsert's filter by a scan.
 */
export async function recordRevisions(ctx: OperationContext, docs: readonly EntryDoc[], note?: string): Promise<void> {
  if (docs.length === 0) return;
  const rows = docs.map((doc) => ({ _id: `${doc._id}:${doc.version}`, siteId: doc.siteId, ...revisionFields(ctx, doc, note) }));
  try {
    await contentCollections(ctx.db).revisions.insertMany(rows, { ordered: false });
  } catch (error) {
    if (!onlyDuplicateWrites(error)) throw error;
  }
}

/** The published snapshot of the working revision. */
export function snapshotOf(doc: Pick<EntryDoc, 'title' | 'slug' | 'excerpt' | 'blocks' | 'fields'>): LiveSnapshot {
  return { title: doc.title, titleLower: doc.title.toLowerCase(), slug: doc.slug, excerpt: doc.excerpt, blocks: doc.blocks, fields: doc.fields };
}
