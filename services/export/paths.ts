/**
 * Where every page of the exported site lives. Pages are folders with an `index.html`; reserved
 * folders start with `_` (slugs never do), so `_page`, `_tax` never meet a type or entry slug.
 * Links between pages are relative (`../../`), so the site works at a host's root, under the
 * gateway's preview prefix and unpacked from the archive alike.
 */
export const PAGE_SIZE = 20;

const seg = (value: string) => encodeURIComponent(value || '_');

export const entryDir = (e: { locale: string; type: string; slug: string }) => `${seg(e.locale)}/${seg(e.type)}/${seg(e.slug)}/`;
export const entryJson = (e: { locale: string; type: string; slug: string }) => `${seg(e.locale)}/${seg(e.type)}/${seg(e.slug)}.json`;
const paged = (dir: string, page: number) => (page <= 1 ? dir : `${dir}_page/${page}/`);
export const homeDir = (locale: string, page = 1) => paged(`${seg(locale)}/`, page);
export const typeDir = (locale: string, type: string, page = 1) => paged(`${seg(locale)}/${seg(type)}/`, page);
export const termDir = (locale: string, taxonomy: string, term: string, page = 1) => paged(`${seg(locale)}/_tax/${seg(taxonomy)}/${seg(term)}/`, page);
export const feedPath = (locale: string) => `${seg(locale)}/feed.xml`;

/** The file behind a page folder. */
export const indexFile = (dir: string) => `${dir}index.html`;

/** A link from the page in folder `fromDir` to `target` (a path from the output root). */
export function relative(fromDir: string, target: string): string {
  const depth = fromDir.split('/').filter(Boolean).length;
  const up = '../'.repeat(depth);
  return up + target || './';
}
