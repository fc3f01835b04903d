import type { Collection, Db, Filter } from 'mongodb';
import type { Services } from '../core/context.ts';
import type { IndexSpec } from '../core/feature.ts';
import type { Workspace } from '../core/tenants.ts';
import { onlyDuplicateWrites } from '../core/mongo-errors.ts';
import { startPeriodicPass, type PeriodicPass } from '../core/periodic-pass.ts';
import { contentCollections, type EntryDoc } from './model.ts';
import { SEARCH_INDEX_VERSION, weighWords, type SearchSource } from './search-tokens.ts';
import { mediaReferences } from './ndjson-format.ts';

/**
 * The search index the service keeps itself (docs/content.md, "Search"): one posting per entry,
 * view and distinct word, in `search_terms`. Views: `w` the working revision of every live entry
 * (Management search), `p` the published snapshot of published entries (Public API), and `b` for
 * both at once when a published entry's working revision is its snapshot (the usual case: half the
 * postings). A search reads `p` and `b`, or `w` and `b`. View `m` holds no words: one posting per
 * media id the entry uses (`mediaId` anywhere in its blocks or fields, working or published), which
 * the media library's "used in" reads (media-usage-ops.ts); no search ever reads it. Besides its
 * words, an entry has one row of view `f` listing them (so its next change takes their counts
 * back); a frequency row (`~df:…`) counts, for one locale and word, the entries whose
 * working text holds it (`w`) and those whose published text does (`p`): a search reads those of
 * its words to read the rarest first (search-query.ts).
 * Written by the write path after every change of an entry, and by the worker's backfill for
 * entries written before (or while a process died between an entry's write and its postings).
 */

export const SEARCH_COLLECTION = 'search_terms';

/** What a search reads: the published snapshots or the working revisions. */
export type SearchView = 'w' | 'p';
export type PostingView = SearchView | 'b' | 'm' | 'f';

/** The posting views a search of `view` reads. */
export const viewsOf = (view: SearchView): PostingView[] => [view, 'b'];

export interface PostingDoc {
  /** `<entryId>:<view>:<token>`: writing the same posting twice is a duplicate, never a double. */
  _id: string;
  siteId: string;
  view: PostingView;
  locale: string;
  token: string;
  entryId: string;
  /** The word's weight in the entry (field weights, saturation, length: search-tokens.ts). */
  w: number;
  /** The entry's filter and scope fields, so a search filters postings before it ranks them. */
  type: string;
  status: EntryDoc['status'];
  authorId: string | null;
  terms: string[];
  /**
   * The row of view `f` only: the words of the entry's postings, each `<view>:<token>` (view `w`,
   * `p` or `b`), whose counts its next change takes back (`countFrequencies`).
   */
  counted?: string[];
}

/**
 * How many entries of a site hold a word in one locale, in their working text (`w`) and in their
 * published text (`p`): an entry of view `b` counts in both, in one statement, so publishing a
 * draft as it is moves one count per word (`p`), not two rows. A posting's `_id` never starts with `~`.
 */
interface FrequencyDoc {
  _id: string;
  w?: number;
  p?: number;
}

/** A posting's `_id`: writing the same posting twice is a duplicate. */
const postingId = (entryId: string, view: PostingView, token: string): string => `${entryId}:${view}:${token}`;

/** The frequency row of a word in one locale of a site. */
export const frequencyId = (siteId: string, locale: string, token: string): string => `~df:${siteId}:${locale}:${token}`;

/** The backfill's progress in a workspace database: entries up to `after` (by `_id`) are indexed. */
interface BackfillState {
  _id: string;
  after: string | null;
  done: boolean;
}

export const SEARCH_INDEXES: readonly IndexSpec[] = [
  // Words: equality on site, view and locale (each may be an `$in`) and token, then the posting's
  // weight, heaviest first (newest first among equals): a word's best postings are the first ones
  // read, so a common word reads only its best few hundred (search-query.ts). A prefix is a range on
  // token, read in word order.
  // `type` last: a type filter is checked on the index's key, before a posting is read (MongoDB and
  // the local engine both do), so a word read with a rare type skips the others' postings unread.
  { collection: SEARCH_COLLECTION, keys: { siteId: 1, view: 1, locale: 1, token: 1, w: -1, entryId: -1, type: 1 } },
  // An entry's postings: replaced on every change of it; a word or a prefix among candidate entries,
  // `w` last so that lookup is covered too (answered from the index's keys, no posting read).
  { collection: SEARCH_COLLECTION, keys: { siteId: 1, entryId: 1, view: 1, token: 1, w: 1 } },
];

const BACKFILL_ID = `~backfill:v${SEARCH_INDEX_VERSION}`;

/** The entry fields a posting is computed from. */
export const SEARCHED_FIELDS = {
  _id: 1,
  siteId: 1,
  type: 1,
  title: 1,
  slug: 1,
  locale: 1,
  status: 1,
  excerpt: 1,
  blocks: 1,
  fields: 1,
  live: 1,
  authorId: 1,
  terms: 1,
  version: 1,
  trashedAt: 1,
} as const;
type SearchedEntry = Pick<EntryDoc, keyof typeof SEARCHED_FIELDS>;

/** The postings collection of a workspace database (made with its indexes by its first write, core/first-write.ts). */
export const searchTerms = (db: Db): Collection<PostingDoc> => db.collection<PostingDoc>(SEARCH_COLLECTION);
/** Its frequency rows (`frequencyId`). */
export const frequencyRows = (db: Db): Collection<FrequencyDoc> => db.collection<FrequencyDoc>(SEARCH_COLLECTION);

const sameText = (a: SearchSource, b: SearchSource) =>
  a.title === b.title &&
  a.slug === b.slug &&
  a.excerpt === b.excerpt &&
  JSON.stringify(a.blocks) === JSON.stringify(b.blocks) &&
  JSON.stringify(a.fields) === JSON.stringify(b.fields);

/** An entry's postings in its current state (none when trashed); the benchmark seeds with it too. */
export function postingsOf(doc: SearchedEntry): PostingDoc[] {
  if (doc.trashedAt) return [];
  const live = doc.status === 'published' ? doc.live : null;
  const views: Array<[PostingView, SearchSource]> = !live
    ? [['w', doc]]
    : sameText(doc, live)
      ? [['b', doc]]
      : [
          ['w', doc],
          ['p', live],
        ];
  const terms = Object.values(doc.terms ?? {}).flat();
  const posting = (view: PostingView, token: string, w: number): PostingDoc => ({
    _id: postingId(doc._id, view, token),
    siteId: doc.siteId,
    view,
    locale: doc.locale,
    token,
    entryId: doc._id,
    w,
    type: doc.type,
    status: doc.status,
    authorId: doc.authorId,
    terms,
  });
  const media = mediaReferences(doc.blocks, doc.fields, live?.blocks, live?.fields).map((id) => posting('m', id, 0));
  const counted: string[] = [];
  const words = views.flatMap(([view, source]) => {
    const weights = weighWords(source);
    for (const token of weights.keys()) counted.push(`${view}:${token}`);
    return [...weights].map(([token, w]) => posting(view, token, w));
  });
  return [...words, ...media, { ...posting('f', '', 0), _id: countedId(doc._id), counted }];
}

/** The entry's row of view `f`: which words its postings hold. */
const countedId = (entryId: string) => `${entryId}:f`;

/** The postings whose rows of view `f` a frequency count is taken from. */
type CountedRows = ReadonlyArray<Pick<PostingDoc, 'siteId' | 'locale' | 'counted'>>;

/**
 * Moves the frequency rows from the counts an entry's postings were in before to those they are in
 * now (one upsert per row whose counts change), read from their rows of view `f`: a word of view
 * `w` counts in `w`, of view `p` in `p`, of view `b` in both. A row of `SEARCH_INDEX_VERSION` 3 or
 * before named its frequency rows whole (`~df:…`, one per view, counted in `n`): taking those back
 * moves nothing, and the backfill deletes them. Kept beside the postings, not with them: a row two
 * racing writers both moved can be off by one, so a search takes a frequency as a hint of which
 * word to read first and as its rarity, never as a limit of what it reads.
 */
export async function countFrequencies(db: Db, before: CountedRows, after: CountedRows): Promise<void> {
  const change = new Map<string, Record<SearchView, number>>();
  const move = (rows: CountedRows, by: number) => {
    for (const row of rows)
      for (const word of row.counted ?? []) {
        const view = word.slice(0, 2);
        if (view !== 'w:' && view !== 'p:' && view !== 'b:') continue;
        const rowId = frequencyId(row.siteId, row.locale, word.slice(2));
        const counts = change.get(rowId) ?? { w: 0, p: 0 };
        if (view !== 'p:') counts.w += by;
        if (view !== 'w:') counts.p += by;
        change.set(rowId, counts);
      }
  };
  move(before, -1);
  move(after, 1);
  const ops = [...change].flatMap(([_id, { w, p }]) =>
    w === 0 && p === 0 ? [] : [{ updateOne: { filter: { _id }, update: { $inc: { ...(w !== 0 && { w }), ...(p !== 0 && { p }) } }, upsert: true } }],
  );
  if (ops.length === 0) return;
  const rows = frequencyRows(db);
  await rows.bulkWrite(ops, { ordered: false }).catch(async (error: unknown) => {
    // Two first upserts of one row: the loser's is a duplicate, which now exists and takes the increment.
    const duplicates = onlyDuplicateWrites(error);
    if (!duplicates) throw error;
    await rows.bulkWrite(
      duplicates.map((e) => ops[e.index]),
      { ordered: false },
    );
  });
}

/** An entry to index: the state its writer wrote (null: it is gone); `fresh`: that writer just inserted it, so it has no postings yet. */
export interface EntrySearchState {
  entryId: string;
  doc: SearchedEntry | null;
  fresh?: boolean;
}

/**
 * Makes some entries' postings those of their current states, together: one read of the rows of
 * view `f` they counted in (none for fresh entries), one delete of their postings (idem), one
 * insert of the new ones, one upsert per frequency row the group moves (the counts summed), one
 * read of the entries' versions. An entry another writer has moved meanwhile (its version differs,
 * or it is gone) is then read and replaced again, with the others so moved, until the states read
 * are the states indexed. So whichever of two racing writers finishes last leaves the postings of
 * the latest state (a replace is a delete of all then an insert in which a posting already written
 * by the other is skipped). An entry named twice is indexed once, from the state named last (fresh
 * if the first was).
 */
export async function syncEntriesSearch(db: Db, siteId: string, states: readonly EntrySearchState[]): Promise<void> {
  const postings = searchTerms(db);
  const { entries } = contentCollections(db);
  const latest = new Map<string, EntrySearchState>();
  // An entry created in this group (its first state fresh) has no postings yet, whatever followed: its publish too is inserted, nothing deleted.
  for (const state of states) latest.set(state.entryId, latest.get(state.entryId)?.fresh ? { ...state, fresh: true } : state);
  let round = [...latest.values()];
  for (let attempt = 0; attempt < 8 && round.length > 0; attempt++) {
    const held = round.filter((state) => !state.fresh);
    const ids = (list: readonly EntrySearchState[]) => list.map((state) => state.entryId);
    const before = held.length
      ? await postings
          .find({ _id: { $in: held.map((state) => countedId(state.entryId)) }, siteId }, { projection: { siteId: 1, locale: 1, counted: 1 } })
          .toArray()
      : [];
    const next = round.flatMap((state) => (state.doc ? postingsOf(state.doc) : []));
    const replace = async () => {
      if (held.length) await postings.deleteMany({ siteId, entryId: { $in: ids(held) } });
      if (next.length === 0) return;
      await postings.insertMany(next, { ordered: false }).catch((error: unknown) => {
        if (!onlyDuplicateWrites(error)) throw error;
      });
    };
    await Promise.all([replace(), countFrequencies(db, before, next)]);
    // Versions only: nearly every entry is as its writer left it; a moved one is read in full below.
    const versions = await entries.find({ _id: { $in: ids(round) }, siteId }, { projection: { version: 1 } }).toArray();
    const current = new Map(versions.map((row) => [row._id, row.version]));
    const moved = round.filter((state) => (state.doc ? current.get(state.entryId) !== state.doc.version : current.has(state.entryId)));
    round = await Promise.all(
      moved.map(async ({ entryId }) => ({
        entryId,
        doc: current.has(entryId) ? ((await entries.findOne({ _id: entryId, siteId }, { projection: SEARCHED_FIELDS })) as SearchedEntry | null) : null,
      })),
    );
  }
}

/** Batch of the backfill: entries read and indexed per round. */
const BACKFILL_BATCH = 200;

/**
 * Indexes the entries of one workspace database that the write path has not (those written before
 * search existed, or before a change of `SEARCH_INDEX_VERSION`), in `_id` order, `BACKFILL_BATCH`
 * at a time, recording how far it got after each batch: a pass cut short resumes where it stopped.
 * Answers how many entries it indexed; a finished database costs one read.
 */
export async function backfillSearch(services: Services, db: Db, maxBatches = Number.POSITIVE_INFINITY, stopping = () => false): Promise<number> {
  const state = db.collection<BackfillState>(SEARCH_COLLECTION);
  const found = await state.findOne({ _id: BACKFILL_ID });
  if (found?.done) return 0;
  let after = found?.after ?? null;
  let indexed = 0;
  const { entries } = contentCollections(db);
  for (let round = 0; round < maxBatches && !stopping(); round++) {
    const batch = (await entries
      .find(after ? { _id: { $gt: after } } : {}, { projection: SEARCHED_FIELDS })
      .sort({ _id: 1 })
      .limit(BACKFILL_BATCH)
      .toArray()) as SearchedEntry[];
    // A database with no entry yet keeps no search collection (created on first use): nothing to record.
    if (batch.length === 0 && !found && after === null) return 0;
    const bySite = new Map<string, SearchedEntry[]>();
    for (const doc of batch) {
      const docs = bySite.get(doc.siteId);
      if (docs) docs.push(doc);
      else bySite.set(doc.siteId, [doc]);
    }
    for (const [siteId, docs] of bySite)
      await syncEntriesSearch(
        db,
        siteId,
        docs.map((doc) => ({ entryId: doc._id, doc })),
      );
    // Published entries became findable: the sites' public answers (search) are computed again.
    const sites = new Set(batch.filter((doc) => doc.status === 'published' && !doc.trashedAt).map((doc) => doc.siteId));
    await Promise.all([...sites].map((siteId) => services.publicGeneration.written(db, siteId)));
    indexed += batch.length;
    if (batch.length > 0) after = batch[batch.length - 1]._id;
    const done = batch.length < BACKFILL_BATCH;
    // Every entry now counts in rows of this version: the rows of version 3 and before (`n`) count nothing any more.
    if (done) await frequencyRows(db).deleteMany({ _id: { $gte: '~df:', $lt: '~df;' }, n: { $exists: true } } as Filter<FrequencyDoc>);
    await state.updateOne({ _id: BACKFILL_ID }, { $set: { after, done } }, { upsert: true });
    if (done) return indexed;
  }
  return indexed;
}

/** Batches one workspace gets per pass: a big backfill spreads over passes, so a pass (and a worker's stop) stays short. */
const BATCHES_PER_PASS = 50;

/** The worker's pass: the backfill of every active workspace, at most `BATCHES_PER_PASS` batches each. Answers the entries indexed. */
export async function backfillAllSearch(services: Services, stopping = () => false): Promise<number> {
  let indexed = 0;
  for await (const workspace of services.platformDb.collection<Workspace>('workspaces').find({ status: 'active' }, { projection: { _id: 1, dbName: 1 } })) {
    if (stopping()) break;
    indexed += await backfillSearch(services, services.workspaceDb(workspace), BATCHES_PER_PASS, stopping);
  }
  return indexed;
}

/**
 * Runs the backfill in the worker: at boot, then every `intervalMs`. Stops with the MongoDB client.
 * A stop ends the pass after its current batch (its progress is saved), so a worker's stop is not held up.
 */
export function startSearchBackfill(services: Services, intervalMs = 2 * 60_000): PeriodicPass {
  let stopping = false;
  const pass = startPeriodicPass('search backfill', intervalMs, services.log, () => backfillAllSearch(services, () => stopping));
  const stop = () => {
    stopping = true;
    return pass.stop();
  };
  services.mongo.once('topologyClosed', () => void stop());
  return { stop };
}

/**
 * Records a database's entries as indexed, so the backfill leaves them alone: for a bulk writer that
 * wrote its entries' postings itself, or wants none (the data benchmarks' seed, bench/support/seed-bulk.ts).
 */
export async function recordSearchBackfilled(db: Db, after: string | null): Promise<void> {
  await db.collection<BackfillState>(SEARCH_COLLECTION).updateOne({ _id: BACKFILL_ID }, { $set: { after, done: true } }, { upsert: true });
}
