import type { Filter } from 'mongodb';
import type { OperationContext } from '../core/context.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../core/errors.ts';
import { isDuplicateKey, onlyDuplicateWrites } from '../core/mongo-errors.ts';
import { contentCollections, ENTRY_SCOPE, type EntryDoc } from './model.ts';
import { changeAuthor, findEntryInScope, recordRevision } from './entries.ts';
import { settleSchedule } from './lifecycle.ts';
import { cancelSchedule } from './schedule-cancel.ts';
import { countLanded, countNewEntry, countPurged, countRestoreUndone, countTrashed, takeEntries, takeRestoredEntry } from './entry-counts.ts';
import { recordChange } from '../audit/record.ts';
import { syncEntriesSearch } from './search-index.ts';

/**
 * The one write path for content (docs/ARCHITECTURE.md, "Content write path"). Every route, the
 * schedule's activities, the term and taxonomy jobs, the trash and any future import or restore
 * change entries only through these functions, which apply in this order:
 *
 * 1. scope: the stored entry and the result must both be inside the caller's key scope (a bulk
 *    change checks every entry it would touch first and refuses with nothing written);
 * 2. quota: an entry that becomes live again (create, restore) takes one from the kept counters
 *    (`entry-counts.ts`, one conditional `$inc`; a create under no `entries` limit counts nothing);
 * 3. the schedule's consistency: a status set by hand settles the pending dates (`settleSchedule`);
 * 4. optimistic concurrency: one `findOneAndUpdate` on the version read, `$inc: {version: 1}`;
 * 5. the search postings (search-index.ts), queued for the site's next group (search-sync.ts),
 *    which a durable write waits for and a person's does not, and the public generation: derived
 *    from that write (core/public-generation.ts); a change moves it itself (`written`, beside the
 *    revision's round trip), the other writes through the followed handle; a group holding a
 *    published entry moves it again;
 * 6. the revision: the state a change leaves becomes a row (`<entryId>:<version>`, idempotent;
 *    entries.ts, `revisionOf`): a job's durable change writes it before its change, a person's beside
 *    the generation's move once the change has landed (its state then proven by the
 *    compare-and-set); the state written is its own newest revision, with who wrote it and the
 *    system's note (`changedBy`, `changeNote`), so a create writes no revision;
 * 7. the events;
 * 8. a schedule workflow left without dates is stopped (after the write: its token is already void);
 * 9. the audit row.
 */

export type ContentEvent = 'content.created' | 'content.updated' | 'content.published' | 'content.unpublished' | 'content.deleted';

/** Event data: strings only, as the event catalog describes them. */
export function eventData(doc: EntryDoc): Record<string, string> {
  return { id: doc._id, type: doc.type, slug: doc.slug, locale: doc.locale, status: doc.status, version: String(doc.version) };
}

export interface WriteEffects {
  events: ContentEvent[];
  /**
   * A change made by a job or an activity (no person waits on it): its effects are recorded as owed
   * in the same write and cleared after, so a retry after a crash completes them (`settleOwed`).
   */
  durable?: boolean;
  /** The write is the schedule workflow's own activity: its workflow ends by itself, nothing to stop. */
  fromSchedule?: boolean;
  /** Said in the state's revision (`changeNote`) and the audit row: why the system changed the entry, e.g. a late schedule. */
  note?: string;
  /** A bulk change clears its batch's owed markers at once (`clearOwed`): a durable write's is collected here instead of cleared alone. */
  owedMarks?: OwedMark[];
}

/** An entry's owed-effects marker, by the version that owes them. */
export interface OwedMark {
  _id: string;
  version: number;
}

/**
 * Clears the owed-effects markers of entries whose effects are done, in one command: one statement
 * per entry, each found by its `_id` (an `$or` of them is a collection scan on an engine without
 * secondary indexes) and matched on its own `pending.version`, so a newer write still owing its
 * effects keeps its marker. Clearing changes nothing public: written past the derived generation on purpose.
 */
async function clearOwed(ctx: OperationContext, marks: readonly OwedMark[]): Promise<void> {
  if (marks.length === 0) return;
  await contentCollections(bareDb(ctx)).entries.bulkWrite(
    marks.map((mark) => ({
      updateOne: { filter: { _id: mark._id, siteId: ctx.site._id, 'pending.version': mark.version } as Filter<EntryDoc>, update: { $set: { pending: null } } },
    })),
    { ordered: false },
  );
}

/**
 * Makes the entry's search postings those of `doc` (null: it is gone), search-index.ts, in the
 * site's next group (search-sync.ts). A durable write waits for them (its owed marker is cleared
 * after); a person's write does not: a failure is logged, and the entry's next write replaces its
 * postings (docs/content.md, "Search").
 */
function indexEntry(ctx: OperationContext, id: string, doc: EntryDoc | null, { fresh = false, durable = false } = {}): Promise<void> {
  const indexed = ctx.services.searchSync.index(bareDb(ctx), ctx.site._id, { entryId: id, doc, fresh }, { now: durable });
  if (durable) return indexed;
  indexed.catch((error: unknown) => ctx.services.log.error({ err: error, entryId: id }, 'search postings not written'));
  return Promise.resolve();
}

/** The workspace database without the public generation's follow (core/public-generation.ts). */
const bareDb = (ctx: OperationContext) => ctx.services.workspaceDb(ctx.workspace);

/** What follows every landed write, in this order: what the caller started beside it (postings, the generation's move, the revision of the state left), events, schedule clean-up, audit. */
async function settle(ctx: OperationContext, before: EntryDoc | null, after: EntryDoc, effects: WriteEffects, alongside: Promise<unknown>): Promise<void> {
  await alongside;
  for (const event of effects.events) await ctx.emit(event, eventData(after));
  if (before?.schedule && !after.schedule && !effects.fromSchedule) {
    await cancelSchedule(ctx, after._id).catch((e) => ctx.services.log.warn({ err: e }, 'schedule cancel failed; its token is void'));
  }
  if (effects.durable) {
    const mark = { _id: after._id, version: after.version };
    if (effects.owedMarks) effects.owedMarks.push(mark);
    else await clearOwed(ctx, [mark]);
  }
  // Inside an operation this joins the runner's one row; a workflow's write gets a row of its own (docs/audit.md).
  recordChange(ctx, {
    action: effects.events.at(-1) ?? 'content.updated',
    target: { kind: 'entry', id: after._id },
    summary: { changes: before && before.status !== after.status ? { status: { from: before.status, to: after.status } } : undefined, note: effects.note },
  });
}

/** Creates an entry: scope, quota (kept counters), insert (its state its own revision: no revision row), events. A taken slug is a duplicate-key error for the caller. */
export async function createEntry(ctx: OperationContext, doc: EntryDoc): Promise<EntryDoc> {
  ctx.scope.check(doc, ENTRY_SCOPE);
  Object.assign(doc, changeAuthor(ctx));
  await countNewEntry(
    ctx,
    async () => {
      await contentCollections(ctx.db).entries.insertOne(doc);
      ctx.services.recentEntries.remember(ctx.db, doc);
    },
    () => settle(ctx, null, doc, { events: ['content.created'] }, indexEntry(ctx, doc._id, doc, { fresh: true })),
  );
  return doc;
}

/** What a change computes from the current document: the fields to set, or `null` to leave the entry alone. */
export type Compute = (current: EntryDoc) => Partial<EntryDoc> | null | Promise<Partial<EntryDoc> | null>;

/**
 * Changes one live entry. `compute` derives the update from the current document; the write is a
 * single `findOneAndUpdate` filtered on the version that was read. With `expectedVersion` a
 * mismatch (before or at the write) is 409; without it a lost race is recomputed on the fresh
 * document (random back-off), so no write is lost or based on a stale read. `effects` names the
 * events from the documents before and after. Answers `null` when `compute` left the entry alone.
 */
export async function changeEntry(
  ctx: OperationContext,
  id: string,
  expectedVersion: number | undefined,
  compute: Compute,
  effects: (before: EntryDoc, after: EntryDoc) => WriteEffects,
): Promise<{ before: EntryDoc; after: EntryDoc } | null> {
  // The write goes through the bare handle and moves the public generation itself (`written`), so
  // that move runs beside the revision's round trip instead of before it; both land before this returns.
  const { entries } = contentCollections(bareDb(ctx));
  const now = () => ctx.services.clock.now();
  const recent = ctx.services.recentEntries;
  let readBefore = false;
  for (let attempt = 0; attempt < 64; attempt++) {
    // Losers of a race back off a little (random, so they do not collide again in lockstep); a state
    // this process remembered and another moved since is read again at once.
    if (readBefore) await new Promise((resolve) => setTimeout(resolve, Math.random() * 4 * Math.min(attempt, 5)));
    // The first attempt starts from the state this process last wrote, if it holds it (recent-entries.ts):
    // no read; the compare-and-set below is filtered on that state's version and `updatedAt`.
    const remembered = attempt === 0 ? rememberedInScope(ctx, id, expectedVersion) : undefined;
    readBefore = !remembered;
    const before = remembered ?? (await findEntryInScope(ctx, id));
    if (expectedVersion !== undefined && before.version !== expectedVersion) {
      throw new ConflictError(`Version mismatch: expected ${expectedVersion}, current ${before.version}`);
    }
    const computed = await compute(before);
    if (!computed) return null;
    const set = { ...computed };
    if (set.status !== undefined && set.schedule === undefined) set.schedule = settleSchedule(before, set.status, now());
    ctx.scope.check({ ...before, ...set }, ENTRY_SCOPE);
    // The events are known before the write (from the expected result), so a durable write can record them as owed.
    const owed = effects(before, { ...before, ...set, version: before.version + 1 });
    if (owed.durable && remembered) {
      // A durable change writes the revision of the state it leaves before its own write: from the stored state, never a remembered one.
      recent.forget(ctx.db, ctx.site._id, id);
      continue;
    }
    Object.assign(set, changeAuthor(ctx, owed.note));
    if (owed.durable) {
      set.pending = { version: before.version + 1, events: owed.events, note: owed.note ?? null };
      await recordRevision(ctx, before);
    }
    let after: EntryDoc | null;
    try {
      after = await entries.findOneAndUpdate(
        { _id: id, siteId: ctx.site._id, trashedAt: null, version: before.version, ...(remembered && { updatedAt: remembered.updatedAt }) },
        { $set: { ...set, updatedAt: now() }, $inc: { version: 1 } },
        { returnDocument: 'after' },
      );
    } catch (error) {
      if (isDuplicateKey(error)) throw new ConflictError('Another entry in this locale has this slug');
      throw error;
    }
    if (after) {
      // A job's next change reads the entry anyway (its revision comes from the stored state): nothing to keep for it.
      if (owed.durable) recent.forget(ctx.db, ctx.site._id, id);
      else recent.remember(ctx.db, after);
      // A published entry's group moves the generation again once its postings are in (search-sync.ts).
      const generation = ctx.services.publicGeneration.written(bareDb(ctx), ctx.site._id);
      await settle(
        ctx,
        before,
        after,
        owed,
        Promise.all([generation, indexEntry(ctx, id, after, { durable: owed.durable }), owed.durable ? null : recordRevision(ctx, before)]),
      );
      return { before, after };
    }
    recent.forget(ctx.db, ctx.site._id, id);
    if (expectedVersion !== undefined && readBefore) throw new ConflictError(`Version mismatch: expected ${expectedVersion}`);
  }
  throw new ConflictError('The entry is being changed by others; retry');
}

/**
 * The state this process last wrote of the entry (`RecentEntries`), when it is usable as the change's
 * starting point: of the version the caller expects, if it names one, and inside the caller's key
 * scope (else the entry is read, which answers as a read would).
 */
function rememberedInScope(ctx: OperationContext, id: string, expectedVersion: number | undefined): EntryDoc | undefined {
  const doc = ctx.services.recentEntries.get(ctx.db, ctx.site._id, id);
  if (!doc || (expectedVersion !== undefined && doc.version !== expectedVersion)) return undefined;
  return ctx.scope.allows(doc, ENTRY_SCOPE) ? doc : undefined;
}

/** `changeEntry` for an operation that always writes (its compute never answers null). */
export async function changeEntryOrFail(
  ctx: OperationContext,
  id: string,
  expectedVersion: number | undefined,
  compute: (current: EntryDoc) => Partial<EntryDoc> | Promise<Partial<EntryDoc>>,
  effects: (before: EntryDoc, after: EntryDoc) => WriteEffects,
): Promise<{ before: EntryDoc; after: EntryDoc }> {
  const result = await changeEntry(ctx, id, expectedVersion, compute, effects);
  if (!result) throw new NotFoundError();
  return result;
}

/**
 * Refuses, with nothing written, a change that would touch an entry outside the caller's scope:
 * every live or trashed entry `filter` matches must pass `ctx.scope.check` (a generic 401).
 */
export async function checkEntriesInScope(ctx: OperationContext, filter: Filter<EntryDoc>): Promise<number> {
  let n = 0;
  for await (const doc of contentCollections(ctx.db).entries.find({ ...filter, siteId: ctx.site._id }, { projection: { type: 1, locale: 1, authorId: 1 } })) {
    ctx.scope.check(doc, ENTRY_SCOPE);
    n++;
  }
  return n;
}

/** Moves a live entry to the trash: version, revision, `content.deleted`; the counters move it from live to trashed; its schedule stops. */
export async function trashEntry(ctx: OperationContext, id: string): Promise<boolean> {
  await findEntryInScope(ctx, id);
  const now = ctx.services.clock.now();
  const set = { trashedAt: now, updatedAt: now, schedule: null, ...changeAuthor(ctx) };
  // The state the trash leaves as stored (a change may have landed since the read): its revision.
  const before = await contentCollections(ctx.db).entries.findOneAndUpdate(
    { _id: id, siteId: ctx.site._id, trashedAt: null },
    { $set: set, $inc: { version: 1 } },
    { returnDocument: 'before' },
  );
  if (!before) return false;
  const after: EntryDoc = { ...before, ...set, version: before.version + 1 };
  await countTrashed(ctx);
  // Its postings go after the write: a search reads the entry before answering it, and a trashed one is never answered.
  await settle(ctx, before, after, { events: ['content.deleted'] }, Promise.all([indexEntry(ctx, id, after), recordRevision(ctx, before)]));
  return true;
}

async function findTrashed(ctx: OperationContext, id: string): Promise<EntryDoc | null> {
  const doc = await contentCollections(ctx.db).entries.findOne({ _id: id, siteId: ctx.site._id, trashedAt: { $ne: null } });
  if (doc) ctx.scope.check(doc, ENTRY_SCOPE);
  return doc;
}

/** Brings a trashed entry back as a draft (never published by surprise): scope, quota, version, revision, `content.updated`. */
export async function restoreEntry(ctx: OperationContext, id: string): Promise<boolean> {
  const before = await findTrashed(ctx, id);
  if (!before) return false;
  await takeRestoredEntry(ctx);
  const now = ctx.services.clock.now();
  const after = await contentCollections(ctx.db).entries.findOneAndUpdate(
    { _id: id, siteId: ctx.site._id, trashedAt: { $ne: null }, version: before.version },
    { $set: { trashedAt: null, status: 'draft', live: null, publishedAt: null, schedule: null, updatedAt: now, ...changeAuthor(ctx) }, $inc: { version: 1 } },
    { returnDocument: 'after' },
  );
  if (!after) {
    await countRestoreUndone(ctx);
    return false;
  }
  await settle(ctx, before, after, { events: ['content.updated'] }, Promise.all([indexEntry(ctx, id, after), recordRevision(ctx, before)]));
  return true;
}

/** Removes a trashed entry and its revisions for good (one trashed fewer in the counters). */
export async function purgeEntry(ctx: OperationContext, id: string): Promise<boolean> {
  if (!(await findTrashed(ctx, id))) return false;
  const { entries, revisions } = contentCollections(ctx.db);
  const result = await entries.deleteOne({ _id: id, siteId: ctx.site._id, trashedAt: { $ne: null } });
  if (result.deletedCount === 0) return false;
  await countPurged(ctx);
  await Promise.all([revisions.deleteMany({ siteId: ctx.site._id, entryId: id }), indexEntry(ctx, id, null)]);
  await cancelSchedule(ctx, id).catch(() => undefined);
  return true;
}

/** A `scheduled` status set by hand needs a publish date still to come. */
export function requireFuturePublishDate(current: EntryDoc, now: Date): void {
  const publishOn = current.schedule?.publishOn;
  if (!publishOn || publishOn <= now) throw new BadRequestError('status: scheduled needs a future publishOn (PUT /content/{id}/schedule)');
}

/**
 * Completes the effects a durable write still owes (its process died between the write and them):
 * the postings and the events of `pending`, then clears it (its revision was written before the
 * change). Postings are idempotent; an event may be sent twice after a crash (at least once), never
 * lost. Answers how many entries it settled.
 */
export async function settleOwed(ctx: OperationContext, filter: Filter<EntryDoc>, limit: number): Promise<number> {
  const { entries } = contentCollections(ctx.db);
  const owing = await entries
    .find({ ...filter, siteId: ctx.site._id, pending: { $type: 'object' } } as Filter<EntryDoc>)
    .limit(limit)
    .toArray();
  for (const doc of owing) {
    const pending = doc.pending!;
    if (pending.version === doc.version) {
      await indexEntry(ctx, doc._id, doc, { durable: true });
      for (const event of pending.events) await ctx.emit(event, eventData(doc));
    }
  }
  await clearOwed(
    ctx,
    owing.map((doc) => ({ _id: doc._id, version: doc.pending!.version })),
  );
  return owing.length;
}

/** Entries changed at once by a bulk change (term or taxonomy deletion): bounded parallelism. */
const PARALLEL = 25;

/**
 * Changes up to `limit` live entries `filter` matches, each through `changeEntry` (scope, version,
 * revision, events, audit); answers how many it found and changed. A bulk change checks the whole
 * set first with `checkEntriesInScope`. Idempotent when `compute` answers null for an entry that no
 * longer needs the change (and the change makes it stop matching `filter`): called again after a
 * crash, it takes the next entries and changes nothing twice. The owed markers of a group are
 * cleared together once all its entries' effects are done (a crash before leaves them to the retry),
 * in one command that runs beside the next group's changes.
 */
export async function changeEntriesMatching(
  ctx: OperationContext,
  filter: Filter<EntryDoc>,
  limit: number,
  compute: Compute,
  effects: (before: EntryDoc, after: EntryDoc) => WriteEffects,
  progress: () => void = () => undefined,
): Promise<{ found: number; changed: number }> {
  const rows = await contentCollections(ctx.db)
    .entries.find({ ...filter, siteId: ctx.site._id, trashedAt: null }, { projection: { _id: 1 } })
    .limit(limit)
    .toArray();
  let changed = 0;
  // A group's markers are cleared while the next group changes its entries (they touch other
  // documents); every clear has landed before this returns or throws, so the next batch's
  // `settleOwed` never finds a marker whose effects are done.
  let clearing: Promise<void> = Promise.resolve();
  try {
    for (let i = 0; i < rows.length; i += PARALLEL) {
      const owedMarks: OwedMark[] = [];
      const results = await Promise.allSettled(
        rows.slice(i, i + PARALLEL).map((row) =>
          changeEntry(ctx, row._id, undefined, compute, (before, after) => ({ ...effects(before, after), owedMarks })).catch((error) => {
            if (error instanceof NotFoundError) return null; // trashed or purged meanwhile
            throw error;
          }),
        ),
      );
      // Every change of the group has finished (none left running): clear what the landed ones settled, then fail if one failed.
      const previous = clearing;
      clearing = previous.then(() => clearOwed(ctx, owedMarks));
      const failed = results.find((result) => result.status === 'rejected');
      if (failed) throw failed.reason;
      changed += results.filter((result) => result.status === 'fulfilled' && result.value).length;
      progress();
    }
  } finally {
    await clearing;
  }
  return { found: rows.length, changed };
}

/**
 * Applies a bulk change to the trashed entries `filter` matches (a term removed from them): they are
 * not public and announce nothing; the caller checked the scope over them (`checkEntriesInScope`).
 */
export async function changeTrashedEntries(ctx: OperationContext, filter: Filter<EntryDoc>, update: Record<string, unknown>): Promise<void> {
  await contentCollections(ctx.db).entries.updateMany({ ...filter, siteId: ctx.site._id, trashedAt: { $ne: null } } as Filter<EntryDoc>, update as never);
}

/** The events of an entry created as it is (a bulk create may land it published). */
const createdEvents = (doc: EntryDoc): ContentEvent[] => (doc.status === 'published' ? ['content.created', 'content.published'] : ['content.created']);

/** Entries a bulk create inserts per command (`createEntries`). */
const CREATE_PART = 250;

/**
 * Creates many entries at once (the content import), with the effects of `createEntry` for each:
 * scope checked for every one first (a generic 401, nothing written); the quota taken for the batch
 * (`takeEntries`: as many as the limits allow, the rest refused); an `insertMany` per part of
 * `CREATE_PART` (through the followed handle: a published entry moves the public generation); each
 * part's postings in one group; the events; one audit row for the batch (`audit`). Each entry's
 * state is its own revision, with the batch's note (no revision row, as for a create). An entry is one document, so each lands whole
 * (with its terms) or not at all; a slug taken meanwhile refuses that entry only.
 *
 * Durable by its caller, not by a marker per entry: a job that records which entries a batch creates
 * before calling this (the import's checkpoint) completes a crashed call with `settleCreated` on the
 * ones that landed. Clearing a marker per entry would cost one more write each, by scan on an engine
 * serving only `_id` and unique indexes.
 */
export async function createEntries(
  ctx: OperationContext,
  docs: readonly EntryDoc[],
  effects: { note: string; audit: { kind: string; id: string } },
): Promise<{ created: EntryDoc[]; refused: Array<{ doc: EntryDoc; error: string }> }> {
  for (const doc of docs) ctx.scope.check(doc, ENTRY_SCOPE);
  if (docs.length === 0) return { created: [], refused: [] };
  const author = changeAuthor(ctx, effects.note);
  for (const doc of docs) Object.assign(doc, author);
  const { granted, limited } = await takeEntries(ctx, docs.length);
  const refused = docs.slice(granted).map((doc) => ({ doc, error: 'over the entries quota' }));
  const admitted = docs.slice(0, granted);
  const created: EntryDoc[] = [];
  // In parts, each part's insert once the one before has landed, its effects (postings, events)
  // meanwhile: the engine writes a part's postings while it inserts the next part's entries
  // (another collection), and this process builds the next part's documents while the engine works.
  let settling: Promise<unknown> = Promise.resolve();
  try {
    for (let i = 0; i < admitted.length; i += CREATE_PART) {
      const part = admitted.slice(i, i + CREATE_PART);
      const failed = new Set<number>();
      try {
        await contentCollections(ctx.db).entries.insertMany(
          part.map((doc) => ({ ...doc })),
          { ordered: false },
        );
      } catch (error) {
        const duplicates = onlyDuplicateWrites(error);
        if (!duplicates) throw error;
        for (const duplicate of duplicates) failed.add(duplicate.index);
      }
      const landed = part.filter((_, j) => !failed.has(j));
      for (const j of failed) refused.push({ doc: part[j], error: 'slug taken meanwhile by another entry in this locale' });
      created.push(...landed);
      const before = settling;
      settling = Promise.all([before, settleCreated(ctx, landed, { fresh: true })]);
      // Handled here as well: a part's effects failing while the next part inserts is no unhandled rejection (it is thrown below).
      settling.catch(() => undefined);
      // At most two parts' effects in flight: the one before this part's must be done first.
      await before;
    }
    await settling;
  } catch (error) {
    await settling.catch(() => undefined);
    // What was taken for the entries not created goes back; the recount repairs what did land of the part that failed.
    if (limited) await countLanded(ctx, -(granted - created.length)).catch(() => undefined);
    throw error;
  }
  // Under no limit nothing was taken and nothing is counted, as for a single create (entry-counts.ts).
  if (limited) await countLanded(ctx, -(granted - created.length));
  recordChange(ctx, { action: 'content.imported', target: effects.audit, summary: { note: effects.note, affected: { entries: created.length } } });
  return { created, refused };
}

/**
 * What follows a bulk create: the search postings (idempotent) and the events (at least once). A retry after a crash runs it again on what landed. `fresh`: the entries were
 * inserted by this call, so they have no postings yet and get theirs in one bulk write.
 */
export async function settleCreated(ctx: OperationContext, created: readonly EntryDoc[], { fresh = false } = {}): Promise<void> {
  await Promise.all([
    syncEntriesSearch(
      bareDb(ctx),
      ctx.site._id,
      created.map((doc) => ({ entryId: doc._id, doc, fresh })),
    ),
    ...created.flatMap((doc) => createdEvents(doc).map((event) => ctx.emit(event, eventData(doc)))),
  ]);
}

/**
 * Changes many entries, each by its id and its own compute, through `changeEntry` (scope, version,
 * revision, events, audit), a group of PARALLEL at a time; durable like `changeEntriesMatching`
 * (the group's owed markers cleared together). Answers, per item in order, the change (null: left
 * alone) or the error that refused it, so one refused entry does not stop the others.
 */
export async function changeEntriesById(
  ctx: OperationContext,
  items: ReadonlyArray<{ id: string; compute: Compute; effects: (before: EntryDoc, after: EntryDoc) => WriteEffects }>,
): Promise<Array<{ changed: boolean } | { error: unknown }>> {
  const out: Array<{ changed: boolean } | { error: unknown }> = [];
  for (let i = 0; i < items.length; i += PARALLEL) {
    const owedMarks: OwedMark[] = [];
    const results = await Promise.allSettled(
      items
        .slice(i, i + PARALLEL)
        .map((item) => changeEntry(ctx, item.id, undefined, item.compute, (before, after) => ({ ...item.effects(before, after), durable: true, owedMarks }))),
    );
    await clearOwed(ctx, owedMarks);
    for (const result of results) out.push(result.status === 'fulfilled' ? { changed: result.value !== null } : { error: result.reason });
  }
  return out;
}
