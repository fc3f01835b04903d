import type { OperationContext } from '../core/context.ts';
import { ConflictError, NotFoundError } from '../core/errors.ts';
import { isDuplicateKey } from '../core/mongo-errors.ts';
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
 * Live (not trashed) entry of this site; 404 if there is none. One outside the caller's key scope
 * is refused by the operation's declared scope (`ctx.scope`, a generic 401), as for writes.
 */
export async function findEntry(ctx: OperationContext, id: string): Promise<EntryDoc> {
  return findEntryForWrite(ctx, id);
}

/** An entry about to be read or written: 404 if absent or trashed, refused if outside the caller's key scope. */
export async function findEntryForWrite(ctx: OperationContext, id: string): Promise<EntryDoc> {
  const doc = await contentCollections(ctx.db).entries.findOne({ _id: id, siteId: ctx.site._id, trashedAt: null });
  if (!doc) throw new NotFoundError();
  ctx.scope.check(doc, ENTRY_SCOPE);
  return doc;
}

/**
 * The one write path for an existing entry. `compute` derives the update from the current
 * document; the write is a single `findOneAndUpdate` filtered on the version that was read and
 * `$inc`s it. Of N racing writers carrying the same `expectedVersion` exactly one matches and the
 * others get 409. Without `expectedVersion` a lost race is simply recomputed on the fresh
 * document, so no write is ever lost or based on a stale read.
 */
export async function mutateEntry(
  ctx: OperationContext,
  id: string,
  expectedVersion: number | undefined,
  compute: (current: EntryDoc) => Partial<EntryDoc> | Promise<Partial<EntryDoc>>,
): Promise<{ before: EntryDoc; after: EntryDoc }> {
  const { entries } = contentCollections(ctx.db);
  for (let attempt = 0; attempt < 64; attempt++) {
    // Losers of a race back off a little (random, so they do not collide again in lockstep).
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.random() * 4 * Math.min(attempt, 5)));
    const before = await findEntryForWrite(ctx, id);
    if (expectedVersion !== undefined && before.version !== expectedVersion) {
      throw new ConflictError(`Version mismatch: expected ${expectedVersion}, current ${before.version}`);
    }
    const set = await compute(before);
    ctx.scope.check({ ...before, ...set }, ENTRY_SCOPE);
    let after: EntryDoc | null;
    try {
      after = await entries.findOneAndUpdate(
        { _id: id, siteId: ctx.site._id, trashedAt: null, version: before.version },
        { $set: { ...set, updatedAt: ctx.services.clock.now() }, $inc: { version: 1 } },
        { returnDocument: 'after' },
      );
    } catch (error) {
      if (isDuplicateKey(error)) throw new ConflictError('Another entry in this locale has this slug');
      throw error;
    }
    if (after) return { before, after };
    if (expectedVersion !== undefined) throw new ConflictError(`Version mismatch: expected ${expectedVersion}`);
  }
  throw new ConflictError('The entry is being changed by others; retry');
}

/** Keeps a copy of every saved state. Keyed by entry and version, so a repeated call writes nothing new. */
export async function recordRevision(ctx: OperationContext, doc: EntryDoc): Promise<void> {
  await contentCollections(ctx.db).revisions.updateOne(
    { _id: `${doc._id}:${doc.version}`, siteId: doc.siteId },
    {
      $setOnInsert: {
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
      },
    },
    { upsert: true },
  );
}

/** The published snapshot of the working revision. */
export function snapshotOf(doc: Pick<EntryDoc, 'title' | 'slug' | 'excerpt' | 'blocks' | 'fields'>): LiveSnapshot {
  return { title: doc.title, titleLower: doc.title.toLowerCase(), slug: doc.slug, excerpt: doc.excerpt, blocks: doc.blocks, fields: doc.fields };
}
