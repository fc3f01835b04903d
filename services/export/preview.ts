import { Readable } from 'node:stream';
import type { Db } from 'mongodb';
import { liveFile, liveOutput, readExportFile, readFile } from './files.ts';
import type { LiveOutput, StoredFile } from './model.ts';

/** Where a site's preview lives on its own host: `https://<site host>/static-preview/…`. */
export const PREVIEW_PREFIX = '/static-preview';

export type PreviewAnswer =
  { kind: 'file'; file: StoredFile; status: 200 | 404 } | { kind: 'redirect'; status: number; location: string } | { kind: 'missing' };

/**
 * A URL path (after the prefix) as an export path: segments decoded and re-encoded the way the
 * export writes them, so `%C3%A9` and `é` find the same file; `..` and empty segments never
 * reach a lookup. null for a path that cannot name a file.
 */
export function exportPathOf(urlPath: string): string | null {
  const segments = urlPath.split('/');
  const out: string[] = [];
  for (const [i, segment] of segments.entries()) {
    if (segment === '' && i === segments.length - 1) continue;
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return null;
    }
    if (decoded === '' || decoded === '.' || decoded === '..' || decoded.includes('/') || decoded.includes('\0')) return null;
    out.push(encodeURIComponent(decoded));
  }
  return out.join('/');
}

/** `_redirects` of the served export: `from to status` per line. */
async function redirectRules(db: Db, siteId: string, live: LiveOutput | null): Promise<{ from: string; to: string; status: number }[]> {
  const rules = await readExportFile(db, siteId, '_redirects', live);
  if (!rules) return [];
  return rules.body
    .toString('utf8')
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((parts) => parts.length === 3)
    .map(([from, to, status]) => ({ from, to, status: Number(status) }));
}

/**
 * What the preview answers for a path of one site's served export (only that site's files are
 * ever looked up): the file; a folder without its slash → 301 to the slash; a redirect rule of
 * the export → its status and target; else the export's 404 page.
 */
export async function resolvePreview(db: Db, siteId: string, urlPath: string): Promise<PreviewAnswer> {
  const live = await liveOutput(db, siteId);
  if (!live) return { kind: 'missing' };
  const path = exportPathOf(urlPath);
  if (path !== null) {
    const wantsFolder = urlPath === '' || urlPath.endsWith('/');
    const file = await liveFile(db, siteId, wantsFolder ? `${path ? `${path}/` : ''}index.html` : path, live);
    if (file) return { kind: 'file', file, status: 200 };
    if (!wantsFolder && (await liveFile(db, siteId, `${path}/index.html`, live))) {
      return { kind: 'redirect', status: 301, location: `${PREVIEW_PREFIX}/${path}/` };
    }
    const sitePath = `/${path}`.replace(/\/+$/, '') || '/';
    const rule = (await redirectRules(db, siteId, live)).find((r) => r.from === sitePath);
    if (rule) return { kind: 'redirect', status: rule.status, location: rule.to.startsWith('/') ? `${PREVIEW_PREFIX}${rule.to}` : rule.to };
  }
  const notFound = await liveFile(db, siteId, '404.html', live);
  return notFound ? { kind: 'file', file: notFound, status: 404 } : { kind: 'missing' };
}

export const openPreviewFile = (db: Db, file: StoredFile): Readable => Readable.from(readFile(db, file), { objectMode: false });
