import { escapeHtml } from '../core/text.ts';
import { safeUrl } from '../core/safe-url.ts';
import type { BlockDocument } from '../content/model.ts';

/**
 * The block document (contract 9.3) fixes no block schema; these are the block types the export
 * renders (docs/plugins.md, "Block types"). A block's fields may sit on the block or under `data`.
 * Anything else renders through the fallback: a `div.block-unknown` naming the type and showing
 * the block's text, never dropped silently. Everything is escaped; `html` blocks are shown as text.
 */
export const BLOCK_TYPES = [
  'paragraph',
  'heading',
  'list',
  'quote',
  'code',
  'preformatted',
  'html',
  'image',
  'gallery',
  'video',
  'audio',
  'file',
  'embed',
  'table',
  'separator',
  'spacer',
  'button',
  'buttons',
  'columns',
  'group',
  'reusable',
] as const;

export interface BlockEnv {
  /** Absolute URL of a media item (the stable `/media/files/:id` address of the site). */
  mediaUrl(id: string): string;
  /** A site path (`/about`) as a link from the current page; other URLs pass through. */
  link(url: string): string;
  reusable: Record<string, BlockDocument>;
  /** Nesting guard (columns in groups in reusable blocks...). */
  depth?: number;
}

type Block = Record<string, unknown>;

const field = (block: Block, name: string): unknown => block[name] ?? (block.data as Block | undefined)?.[name];
const str = (block: Block, ...names: string[]) => {
  for (const name of names) {
    const value = field(block, name);
    if (typeof value === 'string') return value;
    if (typeof value === 'number') return String(value);
  }
  return '';
};
const text = (block: Block) => str(block, 'text', 'content', 'value');

function mediaSrc(block: Block, env: BlockEnv): string | null {
  const id = str(block, 'mediaId');
  if (id) return env.mediaUrl(id);
  const url = safeUrl(str(block, 'url', 'src'));
  return url ? env.link(url) : null;
}

function listItems(items: unknown, ordered: boolean): string {
  if (!Array.isArray(items)) return '';
  const tag = ordered ? 'ol' : 'ul';
  const lis = items.map((item) => {
    if (typeof item === 'string' || typeof item === 'number') return `<li>${escapeHtml(String(item))}</li>`;
    if (item && typeof item === 'object') {
      const b = item as Block;
      return `<li>${escapeHtml(text(b))}${listItems(b.children ?? b.items, ordered)}</li>`;
    }
    return '';
  });
  return `<${tag}>${lis.join('')}</${tag}>`;
}

function figure(inner: string, caption: string): string {
  return `<figure>${inner}${caption ? `<figcaption>${escapeHtml(caption)}</figcaption>` : ''}</figure>`;
}

function unknownBlock(block: Block, type: string): string {
  const body = text(block);
  return `<div class="block block-unknown" data-block-type="${escapeHtml(type)}">${body ? `<p>${escapeHtml(body)}</p>` : ''}</div>`;
}

export function renderBlock(raw: unknown, env: BlockEnv): string {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return unknownBlock({}, typeof raw);
  const block = raw as Block;
  const type = typeof block.type === 'string' ? block.type : '';
  const depth = env.depth ?? 0;
  const nested = (blocks: unknown) => (depth < 8 && Array.isArray(blocks) ? blocks.map((b) => renderBlock(b, { ...env, depth: depth + 1 })).join('') : '');
  switch (type) {
    case 'paragraph':
      return `<p>${escapeHtml(text(block))}</p>`;
    case 'heading': {
      const level = Math.min(6, Math.max(2, Number(field(block, 'level') ?? 2) || 2));
      return `<h${level}>${escapeHtml(text(block))}</h${level}>`;
    }
    case 'list':
      return listItems(field(block, 'items'), field(block, 'ordered') === true || field(block, 'style') === 'ordered');
    case 'quote': {
      const cite = str(block, 'cite', 'citation');
      return `<blockquote><p>${escapeHtml(text(block))}</p>${cite ? `<cite>${escapeHtml(cite)}</cite>` : ''}</blockquote>`;
    }
    case 'code':
      return `<pre><code${str(block, 'language') ? ` class="language-${escapeHtml(str(block, 'language'))}"` : ''}>${escapeHtml(text(block) || str(block, 'code'))}</code></pre>`;
    case 'preformatted':
      return `<pre>${escapeHtml(text(block))}</pre>`;
    case 'html':
      // Raw markup would run the author's scripts on the site: shown as text, like code.
      return `<pre class="block-html">${escapeHtml(str(block, 'html') || text(block))}</pre>`;
    case 'image': {
      const src = mediaSrc(block, env);
      if (!src) return unknownBlock(block, type);
      return figure(`<img src="${escapeHtml(src)}" alt="${escapeHtml(str(block, 'alt'))}" loading="lazy">`, str(block, 'caption'));
    }
    case 'gallery': {
      const images = field(block, 'images');
      const inner = Array.isArray(images)
        ? images.map((image) => (image && typeof image === 'object' ? renderBlock({ ...(image as Block), type: 'image' }, env) : '')).join('')
        : '';
      return `<div class="gallery">${inner}</div>`;
    }
    case 'video':
    case 'audio': {
      const src = mediaSrc(block, env);
      if (!src) return unknownBlock(block, type);
      return figure(`<${type} controls preload="none" src="${escapeHtml(src)}"></${type}>`, str(block, 'caption'));
    }
    case 'file': {
      const src = mediaSrc(block, env);
      if (!src) return unknownBlock(block, type);
      return `<p class="file"><a href="${escapeHtml(src)}" download>${escapeHtml(str(block, 'name', 'filename', 'text') || 'Download')}</a></p>`;
    }
    case 'embed': {
      const url = safeUrl(str(block, 'url'));
      if (!url) return unknownBlock(block, type);
      return figure(`<a class="embed" href="${escapeHtml(env.link(url))}">${escapeHtml(str(block, 'title') || url)}</a>`, str(block, 'caption'));
    }
    case 'table': {
      const rows = field(block, 'rows');
      const head = field(block, 'head');
      const cells = (row: unknown, tag: string) => (Array.isArray(row) ? row.map((c) => `<${tag}>${escapeHtml(String(c ?? ''))}</${tag}>`).join('') : '');
      const thead = Array.isArray(head) ? `<thead><tr>${cells(head, 'th')}</tr></thead>` : '';
      const tbody = Array.isArray(rows) ? rows.map((row) => `<tr>${cells(row, 'td')}</tr>`).join('') : '';
      return `<table>${thead}<tbody>${tbody}</tbody></table>`;
    }
    case 'separator':
      return '<hr>';
    case 'spacer':
      return `<div class="spacer" style="height:${Math.min(400, Math.max(0, Number(field(block, 'height') ?? 24) || 0))}px"></div>`;
    case 'button': {
      const url = safeUrl(str(block, 'url'));
      return url
        ? `<a class="button" href="${escapeHtml(env.link(url))}">${escapeHtml(text(block))}</a>`
        : `<span class="button">${escapeHtml(text(block))}</span>`;
    }
    case 'buttons': {
      const buttons = field(block, 'buttons');
      return `<div class="buttons">${Array.isArray(buttons) ? buttons.map((b) => (b && typeof b === 'object' ? renderBlock({ ...(b as Block), type: 'button' }, env) : '')).join('') : ''}</div>`;
    }
    case 'columns': {
      const columns = field(block, 'columns');
      const inner = Array.isArray(columns)
        ? columns.map((c) => `<div class="column">${nested(c && typeof c === 'object' ? (c as Block).blocks : [])}</div>`).join('')
        : '';
      return `<div class="columns">${inner}</div>`;
    }
    case 'group':
      return `<div class="group">${nested(field(block, 'blocks'))}</div>`;
    case 'reusable': {
      const ref = str(block, 'ref', 'slug');
      const doc = env.reusable[ref];
      return doc ? `<div class="reusable" data-ref="${escapeHtml(ref)}">${nested(doc.blocks)}</div>` : unknownBlock(block, type);
    }
    default:
      return unknownBlock(block, type || 'untyped');
  }
}

export const renderBlocks = (doc: BlockDocument | null | undefined, env: BlockEnv) => (doc?.blocks ?? []).map((b) => renderBlock(b, env)).join('\n');
