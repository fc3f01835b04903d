import { escapeHtml } from '../core/text.ts';
import type { PublicEntryView } from '../content/entry-view.ts';
import { ERROR_PAGE_CODES } from '../design/libraries.ts';
import { renderBlocks } from './blocks.ts';
import { absoluteLinks, blockEnv, relativeLinks, renderPage, type LinkTargets, type ListingFacts, type PageInput } from './layout.ts';
import { PAGE_SIZE, entryDir, feedPath, homeDir, indexFile, termDir, typeDir } from './paths.ts';
import type { SiteData } from './site-data.ts';
import type { EntryRow } from './model.ts';
import { EXPORT_CSP_META, HEADERS_FILE } from './csp.ts';

/** A file of the export: path from the output root, type, bytes. */
export interface OutFile {
  path: string;
  contentType: string;
  body: string;
}

const HTML = 'text/html; charset=utf-8';

export type { EntryRow };

/** Template slots an entry page tries (WordPress's hierarchy): `page-<slug>`, `page` / `single-<type>`, `single`; then `index`. */
const entryTemplates = (entry: Pick<PublicEntryView, 'type' | 'slug'>) =>
  entry.type === 'page' ? [`page-${entry.slug}`, 'page', 'index'] : [`single-${entry.type}`, 'single', 'index'];

export function renderEntryPage(
  site: SiteData,
  entry: PublicEntryView,
  terms: Record<string, string[]>,
  alternates: Record<string, string>,
  targets: LinkTargets,
  page: Pick<PageInput, 'headerRef'> & { dir: string },
): string {
  const { dir } = page;
  const links = relativeLinks(dir);
  const published = entry.publishedAt ? `<time datetime="${escapeHtml(entry.publishedAt)}">${escapeHtml(entry.publishedAt.slice(0, 10))}</time>` : '';
  const excerpt = entry.excerpt ? `<p class="excerpt">${escapeHtml(entry.excerpt)}</p>` : '';
  const termLinks = Object.entries(terms)
    .flatMap(([taxonomy, ids]) => ids.map((id) => site.terms.find((t) => t._id === id && t.taxonomy === taxonomy)).filter((t) => t !== undefined))
    .map((t) => `<a rel="tag" href="${escapeHtml(links.to(termDir(site, entry.locale, t.taxonomy, t.slug)))}">${escapeHtml(t.name)}</a>`);
  const body = [
    `<article><h1>${escapeHtml(entry.title)}</h1>${published}${excerpt}`,
    renderBlocks(entry.blocks, blockEnv(site, links)),
    termLinks.length ? `<p class="terms">${termLinks.join(' ')}</p>` : '',
    '</article>',
  ].join('\n');
  return renderPage({
    site,
    locale: entry.locale,
    title: entry.title,
    links,
    targets,
    body,
    alternates,
    canonical: `${site.origin}/${dir}`,
    templates: entryTemplates(entry),
    headerRef: page.headerRef,
    contentType: entry.type,
  });
}

/** How a list page is laid out: its template slots and the content type whose widget areas it shows. */
type ListKind = Pick<PageInput, 'templates' | 'contentType'>;

function listPages(
  site: SiteData,
  targets: LinkTargets,
  facts: ListingFacts,
  locale: string,
  heading: string,
  rows: EntryRow[],
  dirOf: (page: number) => string,
  kind: ListKind,
): OutFile[] {
  const pages = Math.max(1, Math.ceil(rows.length / PAGE_SIZE));
  const out: OutFile[] = [];
  for (let page = 1; page <= pages; page++) {
    const dir = dirOf(page);
    const links = relativeLinks(dir);
    const items = rows.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE).map((row) => {
      const date = row.publishedAt ? ` <time datetime="${escapeHtml(row.publishedAt)}">${escapeHtml(row.publishedAt.slice(0, 10))}</time>` : '';
      const excerpt = row.excerpt ? `<p>${escapeHtml(row.excerpt)}</p>` : '';
      return `<li><a href="${escapeHtml(links.to(entryDir(site, row)))}">${escapeHtml(row.title)}</a>${date}${excerpt}</li>`;
    });
    const nav = [
      page > 1 ? `<a rel="prev" href="${escapeHtml(links.to(dirOf(page - 1)))}">Newer</a>` : '',
      `<span>Page ${page} of ${pages}</span>`,
      page < pages ? `<a rel="next" href="${escapeHtml(links.to(dirOf(page + 1)))}">Older</a>` : '',
    ]
      .filter(Boolean)
      .join(' ');
    const body = `<h1>${escapeHtml(heading)}</h1>\n<ul class="entries">${items.join('\n')}</ul>\n<nav class="paging" aria-label="Pages">${nav}</nav>`;
    out.push({
      path: indexFile(dir),
      contentType: HTML,
      body: renderPage({ site, locale, title: heading, links, targets, body, listing: facts, canonical: `${site.origin}/${dir}`, ...kind }),
    });
  }
  return out;
}

const xml = (text: string) => escapeHtml(text);

function atomFeed(site: SiteData, locale: string, rows: EntryRow[]): string {
  const latest = rows.slice(0, PAGE_SIZE);
  const updated = latest[0]?.updatedAt ?? new Date(0).toISOString();
  const entries = latest.map((row) => {
    const url = `${site.origin}/${entryDir(site, row)}`;
    return `<entry><title>${xml(row.title)}</title><link href="${xml(url)}"/><id>${xml(url)}</id><updated>${xml(row.updatedAt)}</updated>${row.publishedAt ? `<published>${xml(row.publishedAt)}</published>` : ''}${row.excerpt ? `<summary>${xml(row.excerpt)}</summary>` : ''}</entry>`;
  });
  return [
    '<?xml version="1.0" encoding="utf-8"?>',
    `<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="${xml(locale)}">`,
    `<title>${xml(site.title)}</title><id>${xml(`${site.origin}/${homeDir(locale)}`)}</id><updated>${xml(updated)}</updated>`,
    `<link rel="self" href="${xml(`${site.origin}/${feedPath(locale)}`)}"/><link href="${xml(`${site.origin}/${homeDir(locale)}`)}"/>`,
    ...entries,
    '</feed>',
  ].join('\n');
}

const termTemplates = (term: { taxonomy: string; slug: string }) =>
  term.taxonomy === 'category' || term.taxonomy === 'tag'
    ? [`${term.taxonomy}-${term.slug}`, term.taxonomy, 'archive', 'index']
    : [`taxonomy-${term.taxonomy}-${term.slug}`, `taxonomy-${term.taxonomy}`, 'taxonomy', 'archive', 'index'];

/** Translations: published entries of the same type and slug in other locales. */
export function translationKey(row: { type: string; slug: string }): string {
  return `${row.type}\u0000${row.slug}`;
}

function sitemap(site: SiteData, rows: EntryRow[], listDirs: string[]): string {
  const byKey = new Map<string, EntryRow[]>();
  for (const row of rows) byKey.set(translationKey(row), [...(byKey.get(translationKey(row)) ?? []), row]);
  const urls = rows.map((row) => {
    const siblings = byKey.get(translationKey(row)) ?? [];
    const alternates =
      siblings.length > 1
        ? siblings.map((s) => `<xhtml:link rel="alternate" hreflang="${xml(s.locale)}" href="${xml(`${site.origin}/${entryDir(site, s)}`)}"/>`).join('')
        : '';
    return `<url><loc>${xml(`${site.origin}/${entryDir(site, row)}`)}</loc><lastmod>${xml(row.updatedAt)}</lastmod>${alternates}</url>`;
  });
  const lists = listDirs.map((dir) => `<url><loc>${xml(`${site.origin}/${dir}`)}</loc></url>`);
  return [
    '<?xml version="1.0" encoding="utf-8"?>',
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml">',
    ...lists,
    ...urls,
    '</urlset>',
  ].join('\n');
}

/** A page that sends the browser on (for hosts that ignore `_redirects`). */
function redirectPage(target: string, lang: string): string {
  const href = escapeHtml(target);
  return `<!doctype html>\n<html lang="${escapeHtml(lang)}"><head><meta charset="utf-8">${EXPORT_CSP_META}<title>Redirecting</title><meta http-equiv="refresh" content="0; url=${href}"><link rel="canonical" href="${href}"><meta name="robots" content="noindex"></head><body><p>This page has moved to <a href="${href}">${href}</a>.</p></body></html>`;
}

/**
 * Every page that is not an entry page: per locale the home, type and taxonomy term lists (paged)
 * and the Atom feed; the root page, sitemap.xml, the error pages, `_redirects` (Netlify and
 * Cloudflare Pages syntax) with a redirect page per rule, `_headers` (the pages' CSP for static
 * hosts), robots.txt and index.json.
 */
export function renderSitePages(site: SiteData, rows: EntryRow[], targets: LinkTargets): OutFile[] {
  const out: OutFile[] = [];
  const listDirs: string[] = [];
  const sorted = [...rows].sort((a, b) => (b.publishedAt ?? '').localeCompare(a.publishedAt ?? '') || b.id.localeCompare(a.id));
  for (const locale of site.locales) {
    const mine = sorted.filter((r) => r.locale === locale);
    const termsUsed = site.terms.filter((t) => mine.some((r) => r.terms[t.taxonomy]?.includes(t._id)));
    const facts: ListingFacts = {
      recent: mine.slice(0, 5).map((r) => ({ title: r.title, dir: entryDir(site, r) })),
      terms: termsUsed.map((t) => ({ taxonomy: t.taxonomy, name: t.name, dir: termDir(site, locale, t.taxonomy, t.slug) })),
    };
    out.push(
      ...listPages(site, targets, facts, locale, site.title, mine, (page) => homeDir(locale, page), {
        templates: ['front-page', 'home', 'index'],
        contentType: null,
      }),
    );
    listDirs.push(homeDir(locale));
    for (const type of [...new Set(mine.map((r) => r.type))].sort()) {
      const label = site.types.find((t) => t.slug === type)?.label ?? type;
      out.push(
        ...listPages(
          site,
          targets,
          facts,
          locale,
          label,
          mine.filter((r) => r.type === type),
          (page) => typeDir(locale, type, page),
          { templates: [`archive-${type}`, 'archive', 'index'], contentType: type },
        ),
      );
      listDirs.push(typeDir(locale, type));
    }
    for (const term of termsUsed) {
      out.push(
        ...listPages(
          site,
          targets,
          facts,
          locale,
          term.name,
          mine.filter((r) => r.terms[term.taxonomy]?.includes(term._id)),
          (page) => termDir(site, locale, term.taxonomy, term.slug, page),
          { templates: termTemplates(term), contentType: null },
        ),
      );
      listDirs.push(termDir(site, locale, term.taxonomy, term.slug));
    }
    out.push({ path: feedPath(locale), contentType: 'application/atom+xml; charset=utf-8', body: atomFeed(site, locale, mine) });
  }
  out.push({ path: 'index.html', contentType: HTML, body: redirectPage(homeDir(site.defaultLocale), site.defaultLocale) });
  out.push({ path: 'sitemap.xml', contentType: 'application/xml; charset=utf-8', body: sitemap(site, rows, listDirs) });
  out.push({ path: 'robots.txt', contentType: 'text/plain; charset=utf-8', body: `User-agent: *\nAllow: /\nSitemap: ${site.origin}/sitemap.xml\n` });
  out.push({
    path: 'index.json',
    contentType: 'application/json',
    body: JSON.stringify({
      items: sorted.map((r) => ({ id: r.id, title: r.title, type: r.type, locale: r.locale, slug: r.slug, publishedAt: r.publishedAt })),
    }),
  });

  const defaultLinks = absoluteLinks(site.origin);
  for (const code of ERROR_PAGE_CODES) {
    const custom = site.errorPages[code];
    const title = custom?.title ?? (code === '404' ? 'Page not found' : `Error ${code}`);
    const body = `<h1>${escapeHtml(title)}</h1>${custom ? renderBlocks(custom.blocks, blockEnv(site, defaultLinks)) : `<p><a href="${escapeHtml(defaultLinks.to(homeDir(site.defaultLocale)))}">Home</a></p>`}`;
    out.push({
      path: `${code}.html`,
      contentType: HTML,
      body: renderPage({ site, locale: site.defaultLocale, title, links: defaultLinks, targets, body, templates: code === '404' ? ['404'] : [] }),
    });
  }

  const taken = new Set(out.map((f) => f.path));
  // Redirect targets are stored without a trailing slash (site/redirects.ts normalizePath); the
  // export writes every page as <path>/index.html, so a site path without a file extension gets
  // its folder URL and the host needs no second redirect.
  const targetOf = (to: string) => (/^\/[^?#]*[^/?#]$/.test(to) && !/\.[A-Za-z0-9]+$/.test(to) ? `${to}/` : to);
  const rules = site.redirects.map((r) => `${r.from} ${targetOf(r.to)} ${r.status}`);
  for (const rule of site.redirects) {
    const file = rule.from === '/' ? 'index.html' : `${rule.from.slice(1)}/index.html`;
    if (taken.has(file) || rule.from === '/') continue;
    const dir = file.slice(0, -'index.html'.length);
    const to = targetOf(rule.to);
    const target = to.startsWith('/') ? relativeLinks(dir).to(to.slice(1)) : to;
    out.push({ path: file, contentType: HTML, body: redirectPage(target, site.defaultLocale) });
  }
  out.push({ path: '_headers', contentType: 'text/plain; charset=utf-8', body: HEADERS_FILE });
  out.push({ path: '_redirects', contentType: 'text/plain; charset=utf-8', body: rules.length ? `${rules.join('\n')}\n` : '' });
  return out;
}
