import type { Collection, Filter, Sort } from 'mongodb';
import type { OperationContext } from '../core/context.ts';
import { liveEntryCount } from './entry-counts.ts';
import { contentCollections, type EntryDoc } from './model.ts';
import { searchTerms, viewsOf, type PostingDoc, type SearchView } from './search-index.ts';
import { parseQuery, rarity } from './search-tokens.ts';

/**
 * Ranked search over the postings of `search-index.ts` (docs/content.md, "Search"). Every word of
 * the query must be found (the last one as the start of a word, unless the query ends after it);
 * entries are ranked by the sum over the words of rarity × weight (BM25 with field weights), the
 * newest first among equals. Reads: each word's best postings (at most `WORD_CAP`, heaviest first:
 * the word index's order), side by side; then, for a word read only in part, its postings among the
 * candidates (by entry: point lookups); then the page's entries by `_id`.
 */

/** Postings read per word (its heaviest first) before it counts as common, or the page's depth if deeper. */
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
  /** The caller's key scope, checked on each candidate's fields (type, locale, author). */
  inScope?: (posting: Pick<PostingDoc, 'type' | 'locale' | 'authorId'>) => boolean;
  /** How many answers the caller's page needs (`orderedPageEnd`): a filtered search of a common word reads deeper when fewer were found. */
  depth: number;
}

type Hit = Pick<PostingDoc, 'entryId' | 'w' | 'type' | 'status' | 'authorId' | 'terms' | 'locale'>;
type Fields = Record<string, 0 | 1>;

/** The posting fields a request reads: the word's weight, and only the filter fields it filters on (less to read and send). */
function hitFields(request: SearchRequest): Fields {
  const fields: Fields = { _id: 0, entryId: 1, w: 1 };
  if (request.type !== undefined) fields.type = 1;
  if (request.status !== undefined) fields.status = 1;
  if (request.author !== undefined) fields.authorId = 1;
  if (request.term !== undefined) fields.terms = 1;
  if (request.inScope !== undefined) Object.assign(fields, { type: 1, locale: 1, authorId: 1 });
  return fields;
}

/** The request's filters as a posting filter (every posting of an entry carries the entry's filter fields). */
function filtersOf(request: SearchRequest): Filter<PostingDoc> {
  const filter: Filter<PostingDoc> = {};
  if (request.type !== undefined) filter.type = request.type;
  if (request.status !== undefined) filter.status = request.status;
  if (request.author !== undefined) filter.authorId = request.author;
  if (request.term !== undefined) filter.terms = request.term;
  return filter;
}

interface WordHits {
  word: string;
  prefix: boolean;
  /** Best posting per entry (a prefix matches several words of one entry: the heaviest counts), in the order read. */
  hits: Map<string, Hit>;
  /** Every posting of the word was read (no more than the cap). */
  complete: boolean;
}

const tokenMatch = (word: string, prefix: boolean) => (prefix ? { $gte: word, $lt: `${word}\uffff` } : word);

function best(rows: readonly Hit[]): Map<string, Hit> {
  const hits = new Map<string, Hit>();
  for (const row of rows) {
    const seen = hits.get(row.entryId);
    if (!seen || seen.w < row.w) hits.set(row.entryId, row);
  }
  return hits;
}

/**
 * A word's first `WORD_CAP` postings in the word index's order: a word's heaviest first (the best
 * answers of a one-word query, exactly), a prefix's in word order (shorter completions first), each
 * word heaviest first. Views and locales are `$in`s: the index is read in that order over each and
 * the reads merged (MongoDB's "explode for sort"; the local engine does the same).
 */
async function readWord(
  postings: Collection<PostingDoc>,
  base: Filter<PostingDoc>,
  fields: Fields,
  cap: number,
  word: string,
  prefix: boolean,
): Promise<WordHits> {
  const sort = prefix ? { token: 1, w: -1, entryId: -1 } : { w: -1, entryId: -1 };
  const rows = (await postings
    .find({ ...base, token: tokenMatch(word, prefix) } as Filter<PostingDoc>, { projection: fields, sort: sort as Sort, limit: cap + 1 })
    .toArray()) as Hit[];
  return { word, prefix, hits: best(rows.slice(0, cap)), complete: rows.length <= cap };
}

/** A word's postings among some entries only: point lookups by entry on the entry index (a prefix: a range within each entry). */
async function readAmong(
  postings: Collection<PostingDoc>,
  base: Filter<PostingDoc>,
  fields: Fields,
  list: WordHits,
  entryIds: string[],
): Promise<Map<string, Hit>> {
  if (entryIds.length === 0) return new Map();
  const filter = { siteId: base.siteId, entryId: { $in: entryIds }, view: base.view, token: tokenMatch(list.word, list.prefix) };
  return best((await postings.find(filter as Filter<PostingDoc>, { projection: fields }).toArray()) as Hit[]);
}

interface Ranking {
  ids: string[];
  /** Every word was read whole: the ranking is exact (else it ranks among the best-read postings). */
  exact: boolean;
}

async function rank(ctx: OperationContext, request: SearchRequest, words: string[], prefix: string | null, pushFilters: boolean): Promise<Ranking> {
  const postings = searchTerms(ctx.db);
  const base: Filter<PostingDoc> = {
    siteId: ctx.site._id,
    view: { $in: viewsOf(request.view) },
    locale: request.locales.length === 1 ? request.locales[0] : { $in: [...request.locales] },
  };
  const read: Filter<PostingDoc> = pushFilters ? { ...base, ...filtersOf(request) } : base;
  const fields = hitFields(request);
  // A page deep in a broad query's answers reads that deep. A one-word query ranks in the index's
  // order (its score is the word's weight times one rarity): its page is its first postings, unless
  // a key scope (which no read can carry) may drop some of them.
  const oneWord = words.length === 1 && prefix === null && request.inScope === undefined;
  const cap = oneWord ? request.depth : Math.max(WORD_CAP, request.depth);
  const [total, ...lists] = await Promise.all([
    liveEntryCount(ctx),
    ...words.map((word) => readWord(postings, read, fields, cap, word, false)),
    ...(prefix === null ? [] : [readWord(postings, read, fields, cap, prefix, true)]),
  ]);
  const passes = (hit: Hit) =>
    (request.type === undefined || hit.type === request.type) &&
    (request.status === undefined || hit.status === request.status) &&
    (request.author === undefined || hit.authorId === request.author) &&
    (request.term === undefined || hit.terms.includes(request.term)) &&
    (request.inScope === undefined || request.inScope(hit));
  const exact = lists.every((list) => list.complete);
  // Candidates: the rarest word read whole; with every word common, the entries among any word's best
  // postings (each word then looked up among them: the first round of Fagin's threshold algorithm).
  const whole = lists.filter((list) => list.complete).sort((a, b) => a.hits.size - b.hits.size);
  const sources = whole.length > 0 ? [whole[0]] : lists;
  const pool = new Map<string, Hit>();
  for (const list of sources) for (const [id, hit] of list.hits) if (!pool.has(id) && passes(hit)) pool.set(id, hit);
  let candidates = [...pool.keys()];
  const weights = new Map<WordHits, Map<string, Hit>>();
  for (const list of lists) {
    if (candidates.length === 0) return { ids: [], exact };
    let hits = list.hits;
    if (!list.complete) {
      const missing = candidates.filter((id) => !list.hits.has(id));
      const found = await readAmong(postings, base, fields, list, missing);
      hits = new Map([...list.hits, ...found]);
    }
    weights.set(list, hits);
    candidates = candidates.filter((id) => hits.has(id));
  }
  // A word's rarity: how many entries hold it (a common word's count is at least the cap).
  const idf = new Map([...weights.keys()].map((list) => [list, rarity(total, list.complete ? list.hits.size : cap + 1)]));
  const scored = candidates.map((id) => {
    let score = 0;
    for (const [list, hits] of weights) score += idf.get(list)! * hits.get(id)!.w;
    return { id, score };
  });
  scored.sort((a, b) => b.score - a.score || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  return { ids: scored.map((row) => row.id), exact };
}

/**
 * Entry ids, best first: every candidate that holds every word of the query and passes the filters.
 * Filters are checked on the postings read; when a common word leaves fewer answers than the page
 * needs (a narrow filter: an author, a term), the words are read again with the filters in the read,
 * so the best postings read are those that pass.
 */
export async function rankEntries(ctx: OperationContext, request: SearchRequest): Promise<string[]> {
  const { words, prefix } = parseQuery(request.q);
  if (words.length === 0 && prefix === null) return [];
  const first = await rank(ctx, request, words, prefix, false);
  if (first.exact || first.ids.length >= request.depth || Object.keys(filtersOf(request)).length === 0) return first.ids;
  return (await rank(ctx, request, words, prefix, true)).ids;
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
