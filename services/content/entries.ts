import type { OperationContext } from '../core/context.ts';
import { NotFoundError } from '../core/errors.ts';
import { actorUserId } from '../core/principal.ts';
import { contentCollections, ENTRY_SCOPE, type EntryDoc, type LiveSnapshot, type RevisionDoc } from './model.ts';

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

/**
 * The revision of an entry's state at `doc.version`: its content, who wrote it and why (the state's
 * `changedBy` and `changeNote`), and when. An entry's current state is its own newest revision (the
 * list and the get by version answer it from the entry); a state becomes a row of
 * `content_revisions` when a change leaves it (`recordRevision`, write-path.ts), so a create writes
 * no revision at all.
 */
export function revisionOf(doc: EntryDoc): RevisionDoc {
  return {
    _id: `${doc._id}:${doc.version}`,
    siteId: doc.siteId,
    entryId: doc._id,
    version: doc.version,
    title: doc.title,
    slug: doc.slug,
    status: doc.status,
    excerpt: doc.excerpt,
    blocks: doc.blocks,
    fields: doc.fields,
    authorId: doc.changedBy ?? null,
    createdAt: doc.updatedAt,
    note: doc.changeNote ?? null,
  };
}

/** Keeps a state a change has left (or is about to leave) as its revision row. Keyed by entry and version, so a repeated call writes nothing new. */
export async function recordRevision(ctx: OperationContext, doc: EntryDoc): Promise<void> {
  const { _id, siteId, ...fields } = revisionOf(doc);
  await contentCollections(ctx.db).revisions.updateOne({ _id, siteId }, { $setOnInsert: fields }, { upsert: true });
}

/** Who writes a state: recorded on it (`changedBy`, `changeNote`) for the revision it becomes. */
export function changeAuthor(ctx: OperationContext, note?: string): Pick<EntryDoc, 'changedBy' | 'changeNote'> {
  return { changedBy: actorUserId(ctx.principal), changeNote: note ?? null };
}

/** The published snapshot of the working revision. */
export function snapshotOf(doc: Pick<EntryDoc, 'title' | 'slug' | 'excerpt' | 'blocks' | 'fields'>): LiveSnapshot {
  return { title: doc.title, titleLower: doc.title.toLowerCase(), slug: doc.slug, excerpt: doc.excerpt, blocks: doc.blocks, fields: doc.fields };
}
