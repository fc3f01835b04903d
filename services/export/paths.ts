import { permalinkDir, permalinkPath, termArchiveDir, type PathFacts } from '../core/permalinks.ts';
import type { SiteData } from './site-data.ts';

/**
 * Where every page of the exported site lives. Pages are folders with an `index.html`; reserved
 * folders start with `_` (slugs never do), so `_page`, `_tax` (custom taxonomies' terms) never meet a
 * type or entry slug.
 * Links between pages are relative (`../../`), so the site works at a host's root, under the
 * gateway's preview prefix and unpacked from the archive alike.
 */
export const PAGE_SIZE = 20;

const seg = (value: string) => encodeURIComponent(value || '_');

/** What places an entry: the site's permalink rule and its terms (`%category%`). */
export type PathSite = Pick<SiteData, 'permalinks' | 'terms'>;

/** An entry's page folder: the permalink rule (design/permalinks.ts; by default `<locale>/<type>/<slug>/`). */
const termSlugOf = (site: PathSite) => (id: string) => site.terms.find((t) => t._id === id)?.slug;
export const entryDir = (site: PathSite, e: PathFacts) => permalinkDir(site.permalinks, e, termSlugOf(site));
/** The entry's site path (`/en/post/hello`), as its public answer's `path` gives it. */
export const entryPath = (site: PathSite, e: PathFacts) => permalinkPath(site.permalinks, e, termSlugOf(site));
/** The entry's JSON next to its folder (`…/<slug>.json`). */
export const entryJson = (site: PathSite, e: PathFacts) => `${entryDir(site, e).slice(0, -1)}.json`;
const paged = (dir: string, page: number) => (page <= 1 ? dir : `${dir}_page/${page}/`);
export const homeDir = (locale: string, page = 1) => paged(`${seg(locale)}/`, page);
export const typeDir = (locale: string, type: string, page = 1) => paged(`${seg(locale)}/${seg(type)}/`, page);
/** A term's list: the permalink rule's term archive (`categoryBase`, `tagBase`; `<locale>/category/<slug>/` by default). */
export const termDir = (site: PathSite, locale: string, taxonomy: string, term: string, page = 1) =>
  paged(termArchiveDir(site.permalinks, { locale, taxonomy, slug: term }), page);
export const feedPath = (locale: string) => `${seg(locale)}/feed.xml`;

/** The file behind a page folder. */
export const indexFile = (dir: string) => `${dir}index.html`;

/** A link from the page in folder `fromDir` to `target` (a path from the output root). */
export function relative(fromDir: string, target: string): string {
  const depth = fromDir.split('/').filter(Boolean).length;
  const up = '../'.repeat(depth);
  return up + target || './';
}
