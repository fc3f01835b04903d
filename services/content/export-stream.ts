import { Readable } from 'node:stream';
import type { Filter } from 'mongodb';
import type { OperationContext } from '../core/context.ts';
import { contentCollections, type EntryDoc } from './model.ts';
import { taxonomyCollections, type TermDoc } from './taxonomies.ts';
import { entryLineOf, NDJSON_FORMAT, NDJSON_VERSION, type TermRef } from './ndjson-format.ts';

/** Entries rendered per round of term look-ups (and the cursor's batch). */
const CHUNK = 500;
/** Terms held while exporting; past this the memo starts afresh (memory stays bounded whatever the site). */
const TERMS_HELD = 20_000;

/** Names an entry's terms by slug (with their names and ancestors), reading the ones not yet held. */
async function termRefsFor(ctx: OperationContext, docs: readonly EntryDoc[], held: Map<string, TermDoc>): Promise<Array<Record<string, TermRef[]>>> {
  if (held.size > TERMS_HELD) held.clear();
  const { terms } = taxonomyCollections(ctx);
  let missing = [...new Set(docs.flatMap((doc) => Object.values(doc.terms ?? {}).flat()))].filter((id) => !held.has(id));
  // Ancestors are read level by level (a nested taxonomy is shallow).
  for (let depth = 0; missing.length > 0 && depth < 20; depth++) {
    const found = await terms.find({ siteId: ctx.site._id, _id: { $in: missing } }).toArray();
    for (const term of found) held.set(term._id, term);
    missing = [...new Set(found.map((term) => term.parentId).filter((id): id is string => !!id && !held.has(id)))];
  }
  return docs.map((doc) =>
    Object.fromEntries(
      Object.entries(doc.terms ?? {}).map(([taxonomy, ids]) => [
        taxonomy,
        ids.flatMap((id) => {
          const term = held.get(id);
          if (!term) return []; // a term removed meanwhile is no longer the entry's
          const parents: Array<{ slug: string; name: string }> = [];
          for (
            let parent = term.parentId ? held.get(term.parentId) : undefined;
            parent && parents.length < 20;
            parent = parent.parentId ? held.get(parent.parentId) : undefined
          ) {
            parents.unshift({ slug: parent.slug, name: parent.name });
          }
          return [{ slug: term.slug, name: term.name, ...(parents.length ? { parents } : {}) }];
        }),
      ]),
    ),
  );
}

/**
 * The site's live entries (`filter` narrows them: type, locale, the key's scope) as NDJSON, the
 * header line first: one cursor in `_id` order, read a chunk at a time as the client takes the
 * bytes (the stream's back-pressure), so memory stays bounded whatever the number of entries.
 */
export function exportStream(ctx: OperationContext, filter: Filter<EntryDoc>): Readable {
  const held = new Map<string, TermDoc>();
  async function* lines(): AsyncGenerator<string> {
    yield `${JSON.stringify({ format: NDJSON_FORMAT, version: NDJSON_VERSION })}\n`;
    const cursor = contentCollections(ctx.db)
      .entries.find({ ...filter, siteId: ctx.site._id, trashedAt: null } as Filter<EntryDoc>, { projection: { pending: 0 } })
      .sort({ _id: 1 })
      .batchSize(CHUNK);
    let chunk: EntryDoc[] = [];
    const render = async () => {
      const refs = await termRefsFor(ctx, chunk, held);
      const text = chunk.map((doc, i) => `${JSON.stringify(entryLineOf(doc, refs[i]))}\n`).join('');
      chunk = [];
      return text;
    };
    try {
      for await (const doc of cursor) {
        chunk.push(doc);
        if (chunk.length === CHUNK) yield await render();
      }
      if (chunk.length) yield await render();
    } finally {
      await cursor.close();
    }
  }
  return Readable.from(lines(), { objectMode: false });
}
