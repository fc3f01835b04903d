import type { Db } from 'mongodb';
import { DESIGN_COLLECTION, designDocId } from './design-documents.ts';

/**
 * The one rule for where an entry and a term archive live on the public site (docs/site-config.md
 * "Permalinks"): the static export's page folders, the sitemap, the feeds, the Public API's entry
 * `path` and `design/permalinks` answer, and the redirects written when the rule changes all come
 * from `permalinkDir` and `termArchiveDir`. On the ground floor because content (public entries)
 * and design (the settings, the redirects) both apply it.
 */
export interface Permalinks {
  structure: string;
  categoryBase: string;
  tagBase: string;
  /** Content type slug → URL base of its entries; `''` = none. A type not named uses its slug. */
  typeBases: Record<string, string>;
}

/** WordPress-style structure tags; a structure must name the entry itself (slug or id) to be unique. */
export const PERMALINK_TAGS = ['%year%', '%monthnum%', '%day%', '%postname%', '%post_id%', '%category%', '%author%', '%locale%'] as const;

/** Gives the export's historical folders: `<locale>/<type>/<slug>/`. */
export const DEFAULT_PERMALINKS: Permalinks = { structure: '/%postname%/', categoryBase: 'category', tagBase: 'tag', typeBases: {} };

/** What an entry's path is made of (an export row, an entry document's live facts). */
export interface PathFacts {
  id: string;
  locale: string;
  type: string;
  slug: string;
  publishedAt: string | null;
  /** taxonomy → term ids (`%category%` takes the first category's slug). */
  terms?: Record<string, string[]>;
  authorId?: string | null;
}

const seg = (value: string) => encodeURIComponent(value || '_');

/**
 * The entry's folder from the site root, without a leading slash and with a trailing one
 * (`en/post/hello/`). The locale leads unless the structure places `%locale%` itself (translations
 * share a slug, so a path without the locale would collide); then the type's base; then the
 * structure with its tags filled in (dates from `publishedAt`, in UTC).
 */
export function permalinkDir(rules: Permalinks, entry: PathFacts, termSlug: (id: string) => string | undefined = () => undefined): string {
  return permalinkFolders(rules)(entry, termSlug);
}

type TagValue = (entry: PathFacts, termSlug: (id: string) => string | undefined) => string;
const two = (n: number) => String(n).padStart(2, '0');
const utc = (entry: PathFacts) => (entry.publishedAt ? new Date(entry.publishedAt) : null);
const TAG_VALUES: Record<string, TagValue> = {
  '%year%': (e) => String(utc(e)?.getUTCFullYear() ?? 'undated'),
  '%monthnum%': (e) => {
    const date = utc(e);
    return date ? two(date.getUTCMonth() + 1) : '00';
  },
  '%day%': (e) => {
    const date = utc(e);
    return date ? two(date.getUTCDate()) : '00';
  },
  '%postname%': (e) => e.slug,
  '%post_id%': (e) => e.id,
  '%category%': (e, termSlug) => e.terms?.category?.map(termSlug).find((s) => s !== undefined) ?? 'uncategorized',
  '%author%': (e) => e.authorId ?? 'author',
  '%locale%': (e) => e.locale,
};

/**
 * `permalinkDir` of one rule set, its structure parsed once: a public page places a hundred entries
 * by the same rule. A filled-in tag is never empty and holds no `/` (encoded), so the structure's
 * empty segments are its own and dropped here once.
 */
export function permalinkFolders(rules: Permalinks): (entry: PathFacts, termSlug?: (id: string) => string | undefined) => string {
  const segments = rules.structure
    .split('/')
    .filter(Boolean)
    .map((segment) => segment.split(/(%[a-z_]+%)/).map((part, i): string | TagValue => (i % 2 === 1 ? (TAG_VALUES[part] ?? seg(part)) : part)));
  const localeLeads = !rules.structure.includes('%locale%');
  const baseOf = (type: string) => {
    const base = rules.typeBases[type] ?? type;
    return base ? `${base.split('/').map(seg).join('/')}/` : '';
  };
  return (entry, termSlug = () => undefined) => {
    let dir = localeLeads ? `${seg(entry.locale)}/` : '';
    dir += baseOf(entry.type);
    for (const parts of segments) {
      for (const part of parts) dir += typeof part === 'string' ? part : seg(part(entry, termSlug));
      dir += '/';
    }
    return dir || '/';
  };
}

/** The entry's site path as redirect rules store it (leading slash, no trailing one). */
export const permalinkPath = (rules: Permalinks, entry: PathFacts, termSlug?: (id: string) => string | undefined) => permalinkPaths(rules)(entry, termSlug);

/** `permalinkPath` of one rule set, parsed once (`permalinkFolders`). */
export function permalinkPaths(rules: Permalinks): (entry: PathFacts, termSlug?: (id: string) => string | undefined) => string {
  const folderOf = permalinkFolders(rules);
  return (entry, termSlug) => `/${folderOf(entry, termSlug).slice(0, -1)}`;
}

/** Stable text of a rule set: a change of it moves every entry page (the export runs in full). */
export const permalinksKey = (rules: Permalinks) =>
  JSON.stringify([rules.structure, rules.categoryBase, rules.tagBase, Object.entries(rules.typeBases).sort()]);

/** What a term archive's path is made of. */
export interface TermFacts {
  locale: string;
  taxonomy: string;
  slug: string;
}

/**
 * A term archive's folder from the site root (`en/category/news/`): the locale, then the
 * taxonomy's base — `categoryBase` for categories, `tagBase` for tags, `_tax/<taxonomy>` for a
 * custom taxonomy (no base setting; `_` keeps it apart from every type base and slug) — then the
 * term's slug. Pages after the first go under it (the export's `_page/<n>/`).
 */
export function termArchiveDir(rules: Permalinks, term: TermFacts): string {
  const setting = term.taxonomy === 'category' ? rules.categoryBase : term.taxonomy === 'tag' ? rules.tagBase : null;
  const base = setting === null ? ['_tax', seg(term.taxonomy)] : setting.split('/').map(seg);
  return `${[seg(term.locale), ...base, seg(term.slug)].join('/')}/`;
}

/** The term archive's site path as redirect rules store it (leading slash, no trailing one). */
export const termArchivePath = (rules: Permalinks, term: TermFacts) => `/${termArchiveDir(rules, term).slice(0, -1)}`;

/** The site's rule as stored by `PUT /permalinks` (design/permalinks-ops.ts), else the default. */
export async function readPermalinks(db: Db, siteId: string): Promise<Permalinks> {
  const doc = await db
    .collection<{ _id: string; siteId: string; value: Permalinks }>(DESIGN_COLLECTION)
    .findOne({ _id: designDocId(siteId, 'permalinks', 'default'), siteId });
  return doc?.value ?? DEFAULT_PERMALINKS;
}
