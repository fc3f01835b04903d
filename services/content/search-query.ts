import type { Collection, Filter } from 'mongodb';
import type { OperationContext } from '../core/context.ts';
import { liveEntryCount } from './entry-counts.ts';
import { contentCollections, type EntryDoc } from './model.ts';
import { searchTerms, viewsOf, type PostingDoc, type SearchView } from './search-index.ts';
import { parseQuery, rarity } from './search-tokens.ts';

/**
 * Ranked search over the postings of `search-index.ts` (docs/content.md, "Search"). Every word of
 * the query must be found (the last one as the start of a word, unless the query ends after it);
 * entries are ranked by the sum over the words of rarity × weight (BM25 with field weights), the
 * newest first among equals. Reads: one per word, side by side (plus one more for a very common
 * word among the candidates), then the page's entries by `_id`.
 */

/** Postings read per word before it counts as common; the candidates of a query are at most this many. */
export const WORD_CAP = 2000;

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

interface WordHits {
  word: string;
  prefix: boolean;
  /** Best posting per entry (a prefix matches several words of one entry: the heaviest counts). */
  hits: Map<string, Hit>;
  /** Every posting of the word was read (fewer than the cap). */
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

async function readWord(postings: Collection<PostingDoc>, base: Filter<PostingDoc>, fields: Fields, word: string, prefix: boolean): Promise<WordHits> {
  const cursor = postings.find({ ...base, token: tokenMatch(word, prefix) } as Filter<PostingDoc>, { projection: fields }).limit(WORD_CAP + 1);
  // A common word keeps its newest entries (the index's order); a prefix reads in word order.
  if (!prefix) cursor.sort({ entryId: -1 });
  const rows = (await cursor.toArray()) as Hit[];
  return { word, prefix, hits: best(rows.slice(0, WORD_CAP)), complete: rows.length <= WORD_CAP };
}

/** A common word's postings among the candidates only (exact words by the word index, prefixes by the entry index). */
async function readAmong(
  postings: Collection<PostingDoc>,
  base: Filter<PostingDoc>,
  fields: Fields,
  list: WordHits,
  candidates: string[],
): Promise<Map<string, Hit>> {
  const filter = list.prefix
    ? { siteId: base.siteId, entryId: { $in: candidates }, view: base.view, token: tokenMatch(list.word, true) }
    : { ...base, token: list.word, entryId: { $in: candidates } };
  return best((await postings.find(filter as Filter<PostingDoc>, { projection: fields }).toArray()) as Hit[]);
}

/** Entry ids, best first (at most `WORD_CAP`): every candidate that holds every word of the query and passes the filters. */
export async function rankEntries(ctx: OperationContext, request: SearchRequest): Promise<string[]> {
  const { words, prefix } = parseQuery(request.q);
  if (words.length === 0 && prefix === null) return [];
  const postings = searchTerms(ctx.db);
  const base: Filter<PostingDoc> = {
    siteId: ctx.site._id,
    view: { $in: viewsOf(request.view) },
    locale: request.locales.length === 1 ? request.locales[0] : { $in: [...request.locales] },
  };
  const fields = hitFields(request);
  const [total, ...lists] = await Promise.all([
    liveEntryCount(ctx),
    ...words.map((word) => readWord(postings, base, fields, word, false)),
    ...(prefix === null ? [] : [readWord(postings, base, fields, prefix, true)]),
  ]);
  const passes = (hit: Hit) =>
    (request.type === undefined || hit.type === request.type) &&
    (request.status === undefined || hit.status === request.status) &&
    (request.author === undefined || hit.authorId === request.author) &&
    (request.term === undefined || hit.terms.includes(request.term)) &&
    (request.inScope === undefined || request.inScope(hit));
  // The candidates come from the rarest word read whole (or, every word being common, the smallest list).
  const ordered = [...lists].sort((a, b) => Number(b.complete) - Number(a.complete) || a.hits.size - b.hits.size);
  const [first, ...others] = ordered;
  let candidates = [...first.hits.values()].filter(passes).map((hit) => hit.entryId);
  const weights = new Map<WordHits, Map<string, Hit>>([[first, first.hits]]);
  for (const list of others) {
    if (candidates.length === 0) return [];
    const hits = list.complete ? list.hits : await readAmong(postings, base, fields, list, candidates);
    weights.set(list, hits);
    candidates = candidates.filter((id) => hits.has(id));
  }
  // A word's rarity: how many entries hold it (a common word's count is at least the cap).
  const idf = new Map([...weights.keys()].map((list) => [list, rarity(total, list.complete ? list.hits.size : WORD_CAP + 1)]));
  const scored = candidates.map((id) => {
    let score = 0;
    for (const [list, hits] of weights) score += idf.get(list)! * hits.get(id)!.w;
    return { id, score };
  });
  scored.sort((a, b) => b.score - a.score || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
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
