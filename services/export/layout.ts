import { escapeHtml } from '../core/text.ts';
import type { MenuItem } from '../menus/menus.ts';
import { safeUrl } from '../core/safe-url.ts';
import { renderBlock, type BlockEnv } from './blocks.ts';
import { EXPORT_CSP_META } from './csp.ts';
import { feedPath, homeDir, relative } from './paths.ts';
import type { SiteData } from './site-data.ts';

/** Per page: where it is (relative links) or, for error pages served at any path, absolute links. */
export interface PageLinks {
  /** A path from the output root as an href from this page. */
  to(target: string): string;
}

export const relativeLinks = (fromDir: string): PageLinks => ({ to: (target) => relative(fromDir, target) });
export const absoluteLinks = (origin: string): PageLinks => ({ to: (target) => `${origin}/${target}` });

export interface LinkTargets {
  /** Entry id → its page folder, for menu items that point at entries. */
  entryDirs: Record<string, string>;
}

export function blockEnv(site: SiteData, links: PageLinks): BlockEnv {
  return {
    mediaUrl: (id) => `${site.origin}/media/files/${encodeURIComponent(id)}`,
    // Site paths become links inside the export (`/about` → `../about/`); the rest stays.
    link: (url) => (url.startsWith('/') ? links.to(url.slice(1)) : url),
    reusable: site.reusableBlocks,
  };
}

function menuItems(items: MenuItem[], links: PageLinks, targets: LinkTargets): string {
  const lis = items.map((item) => {
    const entry = item.entryId ? targets.entryDirs[item.entryId] : undefined;
    const url = entry !== undefined ? links.to(entry) : item.url ? safeUrl(item.url) : null;
    const href = url === null ? null : url.startsWith('/') ? links.to(url.slice(1)) : url;
    const label = escapeHtml(item.label || 'Link');
    const target = item.target === '_blank' ? ' target="_blank" rel="noopener"' : '';
    const children = item.children?.length ? `<ul>${menuItems(item.children, links, targets)}</ul>` : '';
    return `<li>${href === null ? label : `<a href="${escapeHtml(href)}"${target}>${label}</a>`}${children}</li>`;
  });
  return lis.join('');
}

/** The menu filling a theme location for a locale (a locale-specific one wins over a shared one). */
function menuAt(site: SiteData, location: string, locale: string) {
  return site.menus.find((m) => m.location === location && m.locale === locale) ?? site.menus.find((m) => m.location === location && m.locale === null);
}

export function renderMenu(site: SiteData, location: string, locale: string, links: PageLinks, targets: LinkTargets): string {
  const menu = menuAt(site, location, locale);
  if (!menu) return '';
  return `<nav class="menu menu-${escapeHtml(location)}" aria-label="${escapeHtml(menu.name)}"><ul>${menuItems(menu.items, links, targets)}</ul></nav>`;
}

/** Widgets whose content depends on the entry set: shown on list pages only, so a new post does not make every entry page stale. */
export const LIST_ONLY_WIDGETS = new Set(['recent-posts', 'categories', 'tags', 'archives']);

export interface ListingFacts {
  recent: { title: string; dir: string }[];
  terms: { taxonomy: string; name: string; dir: string }[];
}

function renderWidget(
  site: SiteData,
  widget: SiteData['areas'][number]['widgets'][number],
  locale: string,
  links: PageLinks,
  targets: LinkTargets,
  listing: ListingFacts | null,
): string {
  const s = widget.settings ?? {};
  const title = widget.title ? `<h2>${escapeHtml(widget.title)}</h2>` : '';
  let body: string;
  switch (widget.type) {
    case 'text':
    case 'html':
    case 'custom':
      body = `<p>${escapeHtml(String(s.text ?? s.html ?? s.content ?? ''))}</p>`;
      break;
    case 'image': {
      const env = blockEnv(site, links);
      const src = typeof s.mediaId === 'string' ? env.mediaUrl(s.mediaId) : typeof s.url === 'string' ? safeUrl(s.url) : null;
      body = src ? `<img src="${escapeHtml(src)}" alt="${escapeHtml(String(s.alt ?? ''))}">` : '';
      break;
    }
    case 'menu':
      body = typeof s.location === 'string' ? renderMenu(site, s.location, locale, links, targets) : '';
      break;
    case 'search':
      body = '<p class="muted">Search is not available in the static copy.</p>';
      break;
    case 'recent-posts':
      body = `<ul>${(listing?.recent ?? []).map((r) => `<li><a href="${escapeHtml(links.to(r.dir))}">${escapeHtml(r.title)}</a></li>`).join('')}</ul>`;
      break;
    case 'categories':
    case 'tags':
    case 'archives': {
      const taxonomy = widget.type === 'tags' ? 'tag' : 'category';
      body = `<ul>${(listing?.terms ?? [])
        .filter((t) => widget.type === 'archives' || t.taxonomy === taxonomy)
        .map((t) => `<li><a href="${escapeHtml(links.to(t.dir))}">${escapeHtml(t.name)}</a></li>`)
        .join('')}</ul>`;
      break;
    }
    default:
      body = '';
  }
  return `<section class="widget widget-${escapeHtml(widget.type)}">${title}${body}</section>`;
}

/**
 * The areas a page shows: every area while the site saved no widget layout (the theme's default);
 * with one, an entry or type list page shows its content type's areas in the layout's order, and
 * the home and term lists every area the layout names for any type.
 */
function areasFor(site: SiteData, contentType: string | null): SiteData['areas'] {
  if (!site.widgetLayout) return site.areas;
  const keys = contentType !== null ? (site.widgetLayout[contentType] ?? []) : [...new Set(Object.values(site.widgetLayout).flat())];
  return keys.map((key) => site.areas.find((a) => a.key === key)).filter((a) => a !== undefined);
}

export function renderWidgets(
  site: SiteData,
  locale: string,
  links: PageLinks,
  targets: LinkTargets,
  listing: ListingFacts | null,
  contentType: string | null = null,
): string {
  const areas = areasFor(site, contentType)
    .map((area) => {
      const widgets = area.widgets.filter((w) => listing || !LIST_ONLY_WIDGETS.has(w.type)).map((w) => renderWidget(site, w, locale, links, targets, listing));
      return widgets.length ? `<div class="widget-area" data-area="${escapeHtml(area.key)}">${widgets.join('')}</div>` : '';
    })
    .filter(Boolean);
  return areas.length ? `<aside>${areas.join('')}</aside>` : '';
}

/** Customizer values as CSS custom properties (names and values reduced to safe characters). */
function customizerCss(values: Record<string, unknown>): string {
  const rules = Object.entries(values)
    .filter(([, v]) => typeof v === 'string' || typeof v === 'number')
    .map(([k, v]) => `--${k.replace(/[^a-zA-Z0-9-]/g, '-')}:${String(v).replace(/[^a-zA-Z0-9#%.,() -]/g, '')}`);
  return rules.length ? `:root{${rules.join(';')}}` : '';
}

export interface PageInput {
  site: SiteData;
  locale: string;
  title: string;
  links: PageLinks;
  targets: LinkTargets;
  body: string;
  /** Locale → page folder of the same page in other languages. */
  alternates?: Record<string, string>;
  canonical?: string;
  listing?: ListingFacts | null;
  head?: string;
  /** Template hierarchy slots to try, most specific first; the first the site published lays the page out. */
  templates?: string[];
  /** An entry page's header choice (`PUT /content/{id}/header-ref`); other pages use the site default. */
  headerRef?: { mode: 'library' | 'default' | 'none'; name?: string };
  /** The content type whose widget areas the page shows (null: a page of no single type). */
  contentType?: string | null;
}

type Block = Record<string, unknown>;

/**
 * A saved template part's blocks: `site-title` and `navigation` (a menu location) are the theme's
 * own blocks, the rest render as content blocks (blocks.ts: escaped, links by the URL rule).
 */
function renderPartBlocks(input: PageInput, blocks: unknown[]): string {
  const { site, locale, links } = input;
  const env = blockEnv(site, links);
  return blocks
    .map((raw) => {
      const block = (raw && typeof raw === 'object' ? raw : {}) as Block;
      if (block.type === 'site-title') return `<p class="site-title"><a href="${escapeHtml(links.to(homeDir(locale)))}">${escapeHtml(site.title)}</a></p>`;
      if (block.type === 'navigation') return renderMenu(site, typeof block.menu === 'string' ? block.menu : 'primary', locale, links, input.targets);
      return renderBlock(raw, env);
    })
    .join('');
}

/** The header part of the page: the entry's choice, else the site default; null = the built-in header. */
function headerPart(input: PageInput): string | null {
  const { site, headerRef } = input;
  if (headerRef?.mode === 'none') return '';
  const chosen = headerRef?.mode === 'library' && headerRef.name && site.parts[headerRef.name]?.area === 'header' ? headerRef.name : site.headerDefault;
  const part = site.parts[chosen];
  return part ? `<header class="part part-${escapeHtml(chosen)}">${renderPartBlocks(input, part.blocks.blocks ?? [])}` : null;
}

export function renderPage(input: PageInput): string {
  const { site, locale, links } = input;
  const alternates = Object.entries(input.alternates ?? {})
    .map(([code, dir]) => `<link rel="alternate" hreflang="${escapeHtml(code)}" href="${escapeHtml(links.to(dir))}">`)
    .join('\n');
  const switcher =
    Object.keys(input.alternates ?? {}).length > 1
      ? `<nav class="languages" aria-label="Languages"><ul>${Object.entries(input.alternates!)
          .map(
            ([code, dir]) =>
              `<li><a href="${escapeHtml(links.to(dir))}" hreflang="${escapeHtml(code)}" lang="${escapeHtml(code)}"${code === locale ? ' aria-current="page"' : ''}>${escapeHtml(code)}</a></li>`,
          )
          .join('')}</ul></nav>`
      : '';
  const custom = headerPart(input);
  const header =
    custom === null
      ? `<header><p class="site-title"><a href="${escapeHtml(links.to(homeDir(locale)))}">${escapeHtml(site.title)}</a></p>${renderMenu(site, 'primary', locale, links, input.targets)}${switcher}</header>`
      : custom && `${custom}${switcher}</header>`;
  const footerPart = site.parts.footer;
  const footer = footerPart
    ? `<footer class="part part-footer">${renderPartBlocks(input, footerPart.blocks.blocks ?? [])}${renderMenu(site, 'footer', locale, links, input.targets)}</footer>`
    : `<footer>${renderMenu(site, 'footer', locale, links, input.targets)}</footer>`;
  const main = `<main>${input.body}</main>`;
  const widgets = renderWidgets(site, locale, links, input.targets, input.listing ?? null, input.contentType ?? null);
  const slot = (input.templates ?? []).find((candidate) => site.templates[candidate]);
  return [
    '<!doctype html>',
    `<html lang="${escapeHtml(locale)}">`,
    `<head><meta charset="utf-8">${EXPORT_CSP_META}<meta name="viewport" content="width=device-width, initial-scale=1">`,
    `<title>${escapeHtml(input.title === site.title ? site.title : `${input.title} · ${site.title}`)}</title>`,
    `<meta name="generator" content="static-export; theme=${escapeHtml(site.theme.id)}">`,
    input.canonical ? `<link rel="canonical" href="${escapeHtml(input.canonical)}">` : '',
    alternates,
    `<link rel="alternate" type="application/atom+xml" title="${escapeHtml(site.title)}" href="${escapeHtml(links.to(feedPath(locale)))}">`,
    `<style>${site.theme.stylesheet}${customizerCss(site.customizer)}</style>${input.head ?? ''}</head>`,
    slot ? `<body class="template-${escapeHtml(slot)}">` : '<body>',
    ...(slot ? [renderTemplate(input, site.templates[slot].blocks ?? [], { header, footer, main }), widgets] : [header, main, widgets, footer]),
    '</body></html>',
  ]
    .filter(Boolean)
    .join('\n');
}

/**
 * A published template lays the page out: `template-part` blocks place the header, the footer or
 * another saved part, `post-content` and `query-loop` the page's own body; other blocks render as
 * content. A template that never places the body gets it after its blocks (the page is never empty).
 */
function renderTemplate(input: PageInput, blocks: unknown[], pieces: { header: string; footer: string; main: string }): string {
  let placed = false;
  const out = blocks.map((raw) => {
    const block = (raw && typeof raw === 'object' ? raw : {}) as Block;
    if (block.type === 'post-content' || block.type === 'query-loop') {
      placed = true;
      return pieces.main;
    }
    if (block.type === 'template-part') {
      const name = typeof block.part === 'string' ? block.part : '';
      if (name === 'header') return pieces.header;
      if (name === 'footer') return pieces.footer;
      const part = input.site.parts[name];
      return part ? `<div class="part part-${escapeHtml(name)}">${renderPartBlocks(input, part.blocks.blocks ?? [])}</div>` : '';
    }
    return renderBlock(raw, blockEnv(input.site, input.links));
  });
  if (!placed) out.push(pieces.main);
  return out.filter(Boolean).join('\n');
}
