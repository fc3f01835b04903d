import type { Collection, Filter, Sort } from 'mongodb';
import type { OperationContext } from '../core/context.ts';
import { liveEntryCount } from './entry-counts.ts';
import { contentCollections, type EntryDoc } from './model.ts';
import { frequencyId, frequencyRows, searchTerms, viewsOf, type PostingDoc, type PostingView, type SearchView } from './search-index.ts';
import { parseQuery, rarity } from './search-tokens.ts';

/**
 * Ranked search over the postings of `search-index.ts` (docs/content.md, "Search"). Every word of
 * the query must be found (the last one as the start of a word, unless the query ends after it);
 * entries are ranked by the sum over the words of rarity × weight (BM25 with field weights), the
 * newest first among equals. Reads: the words' frequency rows; the postings of the rarest word (at
 * most `WORD_CAP`, heaviest first: the word index's order), the request's filters in the read, and
 * of the other words too when that one is common; the words not read whole among those candidates
 * (the entry index, rarest first, so the candidates shrink); then the page's entries by `_id`.
 * Every posting read is covered: its filter and its fields are keys of the index it is read from,
 * so no posting document is fetched (unless it filters on status, author, term or a key scope).
 */

/** Postings read of the word read first before it counts as common, or the page's depth if deeper. */
export const WORD_CAP = 200;

export interface SearchRequest {
  view: SearchView;
  /** One locale, or several (a Management search without `locale`: every language of the site). */
  locales: readonly string[];
  q: string;
  type?: string;
  /** A term id: only entries that hold it. */
  term?: string;
  status?: EntryDoc['status'];
  author?: string;
  /** The caller's key scope as a filter (`ctx.scope.filter` with ENTRY_SCOPE: a posting carries its entry's type, locale and author under the entry's names). */
  scope?: Filter<PostingDoc>;
  /** How many answers the caller's page needs (`orderedPageEnd`): a search reads at least that deep. */
  depth: number;
}

type Hit = Pick<PostingDoc, 'entryId' | 'w' | 'view'>;
/** What a read takes of a posting: its entry, weight and view, all keys of the word index (a read filtered on its keys only is covered: no posting is fetched). */
const HIT_FIELDS = { _id: 0, entryId: 1, w: 1, view: 1 } as const;

/** A word of the query as it is read: a whole word is one token, read heaviest first; the prefix (the last word, search as you type) a range of words. */
interface Key {
  token: string;
  /** The prefix: a range of words, with no frequency rows. */
  range: boolean;
}

function keysOf(q: string): Key[] {
  const { words, prefix } = parseQuery(q);
  const keys: Key[] = words.map((token) => ({ token, range: false }));
  if (prefix !== null) keys.push({ token: prefix, range: true });
  return keys;
}

/**
 * The request's filters and key scope as a posting filter (every posting of an entry carries the
 * entry's filter fields). The published views (`p`, `b`) hold published entries only: a status of
 * `published` there is always true and left out, so the Public API's read names only the index's keys.
 */
function filtersOf(request: SearchRequest): Filter<PostingDoc> {
  const filter: Filter<PostingDoc> = { ...request.scope };
  if (request.type !== undefined) filter.type = request.type;
  if (request.status !== undefined && !(request.view === 'p' && request.status === 'published')) filter.status = request.status;
  if (request.author !== undefined) filter.authorId = request.author;
  if (request.term !== undefined) filter.terms = request.term;
  return filter;
}

const tokenMatch = (key: Key) => (key.range ? { $gte: key.token, $lt: `${key.token}\uffff` } : key.token);

/** Best posting per entry (a range matches several words of one entry: the heaviest counts), in the order read. */
function best<T extends Pick<Hit, 'entryId' | 'w'>>(rows: readonly T[]): Map<string, T> {
  const hits = new Map<string, T>();
  for (const row of rows) {
    const seen = hits.get(row.entryId);
    if (!seen || seen.w < row.w) hits.set(row.entryId, row);
  }
  return hits;
}

/**
 * A key's first `cap` postings in the word index's order (a token's heaviest first; a range in word
 * order, each word heaviest first), with the request's filters. Views and locales are `$in`s: the
 * index is read in that order over each and the reads merged (MongoDB's "explode for sort"; the
 * local engine does the same). `complete`: every posting that passes was read.
 */
async function readKey(postings: Collection<PostingDoc>, filter: Filter<PostingDoc>, cap: number, key: Key) {
  const sort = key.range ? { token: 1, w: -1, entryId: -1 } : { w: -1, entryId: -1 };
  const rows = (await postings
    .find({ ...filter, token: tokenMatch(key) } as Filter<PostingDoc>, { projection: HIT_FIELDS, sort: sort as Sort, limit: cap + 1 })
    .toArray()) as Hit[];
  return { hits: best(rows.slice(0, cap)), complete: rows.length <= cap };
}

/**
 * A key's weight in each candidate that holds it: a seek per candidate on the entry index (`w` among
 * its keys: covered), in the view its hit was read from. An entry's words are all in view `b`, or
 * all in `p` and `w` (`postingsOf`), so the other view of the search holds none of them: one seek per
 * candidate, not one per candidate and view (docs/content.md, "Search").
 */
async function readAmong(postings: Collection<PostingDoc>, siteId: string, key: Key, candidates: readonly Hit[]): Promise<Map<string, number>> {
  const byView = new Map<PostingView, string[]>();
  for (const hit of candidates) {
    const ids = byView.get(hit.view);
    if (ids) ids.push(hit.entryId);
    else byView.set(hit.view, [hit.entryId]);
  }
  const reads = await Promise.all(
    [...byView].map(
      ([view, ids]) =>
        postings
          .find({ siteId, entryId: { $in: ids }, view, token: tokenMatch(key) } as Filter<PostingDoc>, { projection: { _id: 0, entryId: 1, w: 1 } })
          .toArray() as Promise<Array<Pick<Hit, 'entryId' | 'w'>>>,
    ),
  );
  return new Map([...best(reads.flat())].map(([id, row]) => [id, row.w]));
}

/** How many entries hold each whole word in the request's view and locales (their frequency rows: a hint, see `countFrequencies`). */
async function frequencies(ctx: OperationContext, view: SearchView, locales: readonly string[], words: readonly string[]): Promise<Map<string, number>> {
  const wordOf = new Map<string, string>();
  for (const word of words) for (const locale of locales) wordOf.set(frequencyId(ctx.site._id, locale, word), word);
  const counts = new Map(words.map((word) => [word, 0]));
  if (wordOf.size === 0) return counts;
  for (const row of await frequencyRows(ctx.db)
    .find({ _id: { $in: [...wordOf.keys()] } })
    .toArray()) {
    const word = wordOf.get(row._id)!;
    counts.set(word, counts.get(word)! + Math.max(0, row[view] ?? 0));
  }
  return counts;
}

/**
 * Entry ids, best first: every candidate that holds every word of the query and passes the filters.
 * The key read first is the rarest whole word when it is rare enough to be read whole (the answers
 * are then exact), else the prefix (a common word's candidates would be its heaviest, not the
 * prefix's), else the rarest word; when it is common, every key's best postings are candidates.
 */
export async function rankEntries(ctx: OperationContext, request: SearchRequest): Promise<string[]> {
  const keys = keysOf(request.q);
  if (keys.length === 0) return [];
  // What this process wrote before the search is in before it reads (search-sync.ts).
  await ctx.services.searchSync.written(ctx.db, ctx.site._id);
  const postings = searchTerms(ctx.db);
  const views = viewsOf(request.view);
  const read: Filter<PostingDoc> = {
    siteId: ctx.site._id,
    view: { $in: views },
    locale: request.locales.length === 1 ? request.locales[0] : { $in: [...request.locales] },
    ...filtersOf(request),
  };
  const newestFirst = (a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0);
  // A page deep in a broad query's answers reads that deep. A one-key query ranks in the index's
  // order (its score is the key's weight times one rarity): its page is its first postings, unless
  // it is a range (read in word order).
  if (keys.length === 1) {
    const cap = keys[0].range ? Math.max(WORD_CAP, request.depth) : request.depth;
    const { hits } = await readKey(postings, read, cap, keys[0]);
    return [...hits.values()].sort((a, b) => b.w - a.w || newestFirst(a.entryId, b.entryId)).map((hit) => hit.entryId);
  }
  const cap = Math.max(WORD_CAP, request.depth);
  const words = keys.filter((key) => !key.range);
  const [total, counts] = await Promise.all([
    liveEntryCount(ctx),
    frequencies(
      ctx,
      request.view,
      request.locales,
      words.map((key) => key.token),
    ),
  ]);
  const byRarity = [...words].sort((a, b) => counts.get(a.token)! - counts.get(b.token)!);
  const prefix = keys.find((key) => key.range);
  const first = byRarity.length > 0 && (counts.get(byRarity[0].token)! <= cap || !prefix) ? byRarity[0] : prefix!;
  const lists = new Map([[first, await readKey(postings, read, cap, first)]]);
  // A common first key: the other keys' best postings are read too (side by side, covered), and the
  // entries among any key's best are the candidates (the first round of Fagin's threshold algorithm).
  if (!lists.get(first)!.complete) {
    const others = keys.filter((key) => key !== first);
    const read2 = await Promise.all(others.map((key) => readKey(postings, read, cap, key)));
    others.forEach((key, i) => lists.set(key, read2[i]));
  }
  const pool = new Map<string, Hit>();
  for (const list of lists.values()) for (const hit of list.hits.values()) if (!pool.has(hit.entryId)) pool.set(hit.entryId, hit);
  let candidates = [...pool.values()];
  // Each key's weight in the candidates: from its read, then looked up where the read was not whole (rarest first: the candidates shrink).
  const weights = new Map<Key, Map<string, number>>();
  for (const key of [first, ...byRarity, ...(prefix ? [prefix] : [])]) {
    if (weights.has(key)) continue;
    if (candidates.length === 0) return [];
    const list = lists.get(key);
    const found = new Map([...(list?.hits.values() ?? [])].map((hit) => [hit.entryId, hit.w]));
    const missing = list?.complete ? [] : candidates.filter((hit) => !found.has(hit.entryId));
    if (missing.length > 0) for (const [id, w] of await readAmong(postings, ctx.site._id, key, missing)) found.set(id, w);
    weights.set(key, found);
    candidates = candidates.filter((hit) => found.has(hit.entryId));
  }
  // A key's rarity: how many entries hold it, from its frequency rows; a key read whole holds at
  // least what was read; else (and a prefix, which has no rows) more than the cap.
  const held = (key: Key) => {
    const counted = counts.get(key.token) ?? 0;
    const list = lists.get(key);
    return list?.complete ? Math.max(counted, list.hits.size) : counted > 0 ? counted : cap + 1;
  };
  const idf = new Map([...weights.keys()].map((key) => [key, rarity(total, held(key))]));
  const scored = candidates.map((hit) => {
    let score = 0;
    for (const [key, found] of weights) score += idf.get(key)! * found.get(hit.entryId)!;
    return { id: hit.entryId, score };
  });
  scored.sort((a, b) => b.score - a.score || newestFirst(a.id, b.id));
  return scored.map((row) => row.id);
}

/**
 * The page's entries in rank order, read by `_id` with the caller's filter, so an entry the index
 * is behind on (trashed, unpublished, moved out of scope a moment ago) is never answered.
 */
export async function entriesInOrder<T extends Pick<EntryDoc, '_id'>>(
  ctx: OperationContext,
  ids: readonly string[],
  filter: Filter<EntryDoc>,
  projection?: Record<string, 1>,
): Promise<T[]> {
  if (ids.length === 0) return [];
  const rows = (await contentCollections(ctx.db)
    .entries.find({ ...filter, _id: { $in: [...ids] } } as Filter<EntryDoc>, projection ? { projection } : {})
    .toArray()) as unknown as T[];
  const byId = new Map(rows.map((row) => [row._id, row]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}
