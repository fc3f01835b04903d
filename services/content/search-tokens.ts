import type { BlockDocument } from './model.ts';

/**
 * The search tokenizer and the weights of an entry's words (docs/content.md, "Search"). Small on
 * purpose: NFKD, combining marks dropped (é → e), lower case, split on anything that is not a
 * letter or a digit (any script). No stemming, no stop words: a word is found as written, or as
 * the start of a longer one (the query's last word, search-as-you-type). Scripts written without
 * spaces (Chinese, Japanese) come out as one token per run of letters.
 */

/** Raise it when the postings change (tokens, weights, views): the worker's backfill then rewrites every entry's postings. */
export const SEARCH_INDEX_VERSION = 4;

/** Longer runs are cut: a token is an index key, and nobody types 64 letters into a search box. */
const MAX_TOKEN_LENGTH = 64;
/** The most distinct words kept per entry and view (the heaviest): bounds the postings a huge body writes. */
export const MAX_TOKENS_PER_ENTRY = 1000;

export function tokenize(text: string): string[] {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((token) => token.length > 0)
    .map((token) => token.slice(0, MAX_TOKEN_LENGTH));
}

/** A query: its words, the last one matched as a prefix unless the text ends after it (a space, a period). */
export interface ParsedQuery {
  words: string[];
  prefix: string | null;
}

/** At most this many words of a query are used (the rest are ignored): each is one index read. */
export const MAX_QUERY_WORDS = 8;

export function parseQuery(q: string): ParsedQuery {
  const tokens = tokenize(q);
  const endsInWord = /[\p{L}\p{N}]$/u.test(q.normalize('NFKD').replace(/\p{M}/gu, ''));
  const prefix = endsInWord && tokens.length > 0 ? tokens[tokens.length - 1] : null;
  const words = [...new Set(prefix === null ? tokens : tokens.slice(0, -1))].filter((word) => word !== prefix);
  return { words: words.slice(0, prefix === null ? MAX_QUERY_WORDS : MAX_QUERY_WORDS - 1), prefix };
}

/** Field weights: a word in the title counts five times a word of the body. */
export const FIELD_WEIGHTS = { title: 5, excerpt: 2.5, fields: 1.5, body: 1, slug: 1 } as const;

/** BM25's saturation and length normalisation; the average length is a constant (no collection statistics are kept). */
const K1 = 1.2;
const B = 0.75;
const AVERAGE_LENGTH = 200;

/** Keys of a block whose strings are not text a reader sees (links, ids, styling). */
const NOT_TEXT_KEYS = new Set([
  'url',
  'src',
  'href',
  'id',
  'type',
  'className',
  'class',
  'style',
  'align',
  'anchor',
  'ref',
  'mediaId',
  'target',
  'rel',
  'variant',
  'color',
  'size',
  'layout',
]);
const TAGS = /<[^>]*>/g;

/** Every string a reader sees in a block document (markup stripped), in document order. */
export function blockText(blocks: BlockDocument | null | undefined): string[] {
  const out: string[] = [];
  const walk = (value: unknown, key: string | null, depth: number) => {
    if (depth > 32) return;
    if (typeof value === 'string') {
      if (key === null || !NOT_TEXT_KEYS.has(key)) out.push(value.replace(TAGS, ' '));
    } else if (Array.isArray(value)) {
      for (const item of value) walk(item, key, depth + 1);
    } else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) walk(v, k, depth + 1);
    }
  };
  walk(blocks?.blocks ?? [], null, 0);
  return out;
}

/** A string of a custom field that is not a link or a path (kind `url`, media references). */
const looksLikeLink = (value: string) => /^[a-z][a-z0-9+.-]*:\/\//i.test(value) || value.startsWith('/') || /^mailto:|^tel:/i.test(value);

/** The text of custom fields: their string values and lists of strings, links left out. */
export function fieldText(fields: Record<string, unknown> | null | undefined): string[] {
  const out: string[] = [];
  for (const value of Object.values(fields ?? {})) {
    const values = Array.isArray(value) ? value : [value];
    for (const item of values) if (typeof item === 'string' && !looksLikeLink(item)) out.push(item);
  }
  return out;
}

/** What is searched of an entry (its working revision or its published snapshot). */
export interface SearchSource {
  title: string;
  slug: string;
  excerpt: string | null;
  blocks: BlockDocument;
  fields: Record<string, unknown>;
}

/**
 * Each distinct word of an entry with its weight: the field-weighted count of the word, saturated
 * and normalised by the entry's length as BM25 does (k1 1.2, b 0.75). A query's score is the sum,
 * over its words, of this weight times the word's rarity (`idf`, at query time).
 */
export function weighWords(source: SearchSource): Map<string, number> {
  const counts = new Map<string, number>();
  let length = 0;
  const add = (texts: readonly string[], weight: number) => {
    for (const text of texts) {
      for (const token of tokenize(text)) {
        counts.set(token, (counts.get(token) ?? 0) + weight);
        length++;
      }
    }
  };
  add([source.title], FIELD_WEIGHTS.title);
  add(source.excerpt ? [source.excerpt] : [], FIELD_WEIGHTS.excerpt);
  add(fieldText(source.fields), FIELD_WEIGHTS.fields);
  add(blockText(source.blocks), FIELD_WEIGHTS.body);
  add([source.slug], FIELD_WEIGHTS.slug);
  const norm = K1 * (1 - B + (B * length) / AVERAGE_LENGTH);
  const weighed = [...counts].map(([token, tf]) => [token, Math.round(((tf * (K1 + 1)) / (tf + norm)) * 1000) / 1000] as const);
  if (weighed.length > MAX_TOKENS_PER_ENTRY) weighed.sort((a, b) => b[1] - a[1]).splice(MAX_TOKENS_PER_ENTRY);
  return new Map(weighed);
}

/** A word's rarity among `total` entries when `found` of them hold it (BM25's idf, never negative). */
export function rarity(total: number, found: number): number {
  const n = Math.max(total, found);
  return Math.log(1 + (n - found + 0.5) / (found + 0.5));
}
