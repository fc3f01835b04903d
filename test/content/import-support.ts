import type { ContentWorld } from './support.ts';
import { eventually } from '../support/polling.ts';

/** One NDJSON line of a generated entry (`i` makes title and slug unique). */
export function entryLine(i: number, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    type: 'post',
    slug: `imported-${i}`,
    title: `Imported ${i}`,
    status: i % 3 === 0 ? 'published' : 'draft',
    excerpt: `Excerpt ${i}`,
    blocks: { version: 1, blocks: [{ type: 'paragraph', text: `Body ${i}` }] },
    terms: { tag: [`t${i % 5}`], category: [{ slug: `c${i % 4}`, name: `Category ${i % 4}`, parents: [{ slug: 'root', name: 'Root' }] }] },
    ...extra,
  });
}

/** Posts an NDJSON body to the import; the raw answer. */
export const postImport = (cw: ContentWorld, body: string, headers: Record<string, string> = { 'content-type': 'application/x-ndjson' }) =>
  cw.manage('POST', '/content/import', body, undefined, headers);

/** Polls an import until it is finished; its last view. */
export async function importFinished(cw: ContentWorld, id: string, timeoutMs = 240_000): Promise<Record<string, unknown> & { state: string }> {
  return eventually(
    async () => {
      const view = (await cw.manage('GET', `/content/imports/${id}`)).json();
      return ['succeeded', 'failed', 'cancelled'].includes(view.state) ? view : undefined;
    },
    `import ${id} finished`,
    timeoutMs,
    100,
  );
}
