import type { PublicEntryView } from '../content/entry-view.ts';
import type { ThemeDefinition } from '../plugins/themes.ts';

import { escapeHtml } from '../core/text.ts';

/** A path segment that is safe in a URL and in a file name, whatever the slug holds. */
const segment = (value: string) => encodeURIComponent(value || '_');

/** Where an entry's files go: `<locale>/<type>/<slug>/index.html` and `<locale>/<type>/<slug>.json`. */
export function entryPaths(entry: Pick<PublicEntryView, 'locale' | 'type' | 'slug'>) {
  const base = `${segment(entry.locale)}/${segment(entry.type)}/${segment(entry.slug)}`;
  return { html: `${base}/index.html`, json: `${base}.json`, href: `${base}/` };
}

function text(block: Record<string, unknown>): string {
  const data = (block.data ?? {}) as Record<string, unknown>;
  const value = block.text ?? block.content ?? data.text ?? '';
  return typeof value === 'string' ? value : '';
}

/**
 * The block document has no fixed block schema in the contract: common shapes (`heading`,
 * `paragraph`, `quote`, `list`, `image`, `code`) render as HTML, anything else is left out of the
 * page (the JSON file beside it carries every block).
 */
function renderBlock(raw: unknown): string {
  if (!raw || typeof raw !== 'object') return '';
  const block = raw as Record<string, unknown>;
  const data = (block.data ?? {}) as Record<string, unknown>;
  switch (block.type) {
    case 'heading': {
      const level = Math.min(6, Math.max(2, Number(block.level ?? data.level ?? 2) || 2));
      return `<h${level}>${escapeHtml(text(block))}</h${level}>`;
    }
    case 'paragraph':
      return `<p>${escapeHtml(text(block))}</p>`;
    case 'quote':
      return `<blockquote>${escapeHtml(text(block))}</blockquote>`;
    case 'code':
      return `<pre><code>${escapeHtml(text(block))}</code></pre>`;
    case 'list': {
      const items = (block.items ?? data.items ?? []) as unknown[];
      return `<ul>${items.map((item) => `<li>${escapeHtml(String(item))}</li>`).join('')}</ul>`;
    }
    case 'image': {
      const src = block.url ?? data.url;
      if (typeof src !== 'string' || !/^(https?:)?\//.test(src)) return '';
      const alt = block.alt ?? data.alt ?? '';
      return `<img src="${escapeHtml(src)}" alt="${escapeHtml(String(alt))}">`;
    }
    default:
      return '';
  }
}

function page(theme: ThemeDefinition, lang: string, title: string, body: string): string {
  return [
    '<!doctype html>',
    `<html lang="${escapeHtml(lang)}">`,
    '<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title>`,
    `<meta name="generator" content="static-export; theme=${escapeHtml(theme.id)}">`,
    `<style>${theme.stylesheet}</style></head>`,
    `<body>${body}</body></html>`,
  ].join('\n');
}

export function renderEntryHtml(entry: PublicEntryView, theme: ThemeDefinition): string {
  const excerpt = entry.excerpt ? `<p class="excerpt">${escapeHtml(entry.excerpt)}</p>` : '';
  const published = entry.publishedAt ? `<time datetime="${escapeHtml(entry.publishedAt)}">${escapeHtml(entry.publishedAt.slice(0, 10))}</time>` : '';
  const blocks = entry.blocks.blocks.map(renderBlock).join('\n');
  return page(theme, entry.locale, entry.title, `<article><h1>${escapeHtml(entry.title)}</h1>${published}${excerpt}\n${blocks}</article>`);
}

export interface IndexItem {
  id: string;
  title: string;
  type: string;
  locale: string;
  slug: string;
  publishedAt: string | null;
}

export function renderIndexHtml(siteName: string, items: IndexItem[], theme: ThemeDefinition): string {
  const list = items.map((item) => `<li><a href="${escapeHtml(entryPaths(item).href)}">${escapeHtml(item.title)}</a></li>`).join('\n');
  return page(theme, 'en', siteName, `<h1>${escapeHtml(siteName)}</h1>\n<ul>\n${list}\n</ul>`);
}
