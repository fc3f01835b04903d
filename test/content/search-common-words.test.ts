import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContentWorld, defaultSiteContext, storedEntryDoc, type ContentWorld } from './support.ts';
import { countFrequencies, postingsOf, searchTerms } from '../../services/content/search-index.ts';
import { WORD_CAP } from '../../services/content/search-query.ts';
import { reconcileEntryCounts } from '../../services/content/entry-counts.ts';
import { contentCollections, type EntryDoc } from '../../services/content/model.ts';
import { newId } from '../../services/core/ids.ts';

/**
 * Search over words held by more entries than a word's read (`WORD_CAP`, docs/content.md "Search"):
 * a word's heaviest postings are read first, a rare word's entries are looked up in a common
 * word's postings, a narrow filter reads again with the filter in the read, a deep page reads as deep.
 */
const COUNT = WORD_CAP + 100;
let cw: ContentWorld;
/** Entry ids by number: entry i is newer than entry i - 1. */
const ids: string[] = [];

beforeAll(async () => {
  cw = await startContentWorld();
  const ctx = await defaultSiteContext(cw.world);
  const db = cw.world.services.workspaceDb({ dbName: ctx.workspace.dbName });
  const base = Date.now() - COUNT * 1000;
  // Setup only (written straight to the database, as the write path leaves them): every entry holds
  // "osprey" and "kite" in its body; one in ten also "osprey" in its title (heavier); entries 5 and
  // 251 hold "merlin"; entries 7 to 9 are pages.
  const docs: EntryDoc[] = Array.from({ length: COUNT }, (_, i) => {
    const at = new Date(base + i * 1000);
    ids.push(newId(at.getTime()));
    return storedEntryDoc(ctx.site._id, {
      _id: ids[i],
      title: i % 10 === 0 ? `Osprey ${i}` : `Entry ${i}`,
      slug: `e-${i}`,
      published: true,
      type: i >= 7 && i <= 9 ? 'page' : 'post',
      blocks: { version: 1, blocks: [{ type: 'paragraph', text: `osprey kite${i === 5 || i === 251 ? ' merlin' : ''}` }] },
      at,
    });
  });
  await contentCollections(db).entries.insertMany(docs);
  const postings = docs.flatMap(postingsOf);
  await searchTerms(db).insertMany(postings);
  await countFrequencies(db, [], postings);
  await reconcileEntryCounts(db);
});
afterAll(async () => cw?.close());

const slugs = (...numbers: number[]) => numbers.map((i) => `e-${i}`);
async function publicSlugs(q: string, extra = ''): Promise<string[]> {
  const res = await cw.pub(`/search?q=${encodeURIComponent(q)}${extra}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().items.map((item: { slug: string }) => item.slug);
}
/** Title holders (every tenth entry), newest first. */
const titled = (count: number) => Array.from({ length: count }, (_, k) => COUNT - 10 - 10 * k);

describe('search of common words', () => {
  it('answers a common word with its heaviest entries first, newest first among equals, on both APIs', async () => {
    expect(await publicSlugs('osprey ')).toEqual(slugs(...titled(20)));
    const manage = await cw.manage('GET', `/content?search=${encodeURIComponent('osprey ')}&limit=20`);
    expect(manage.statusCode, manage.body).toBe(200);
    expect(manage.json().data.map((item: { slug: string }) => item.slug)).toEqual(slugs(...titled(20)));
    // As the start of a word (search as you type), the same.
    expect(await publicSlugs('ospr')).toEqual(slugs(...titled(20)));
  });

  it('pages through every entry that holds a common word, past the first read, each once and in rank order', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const res = await cw.pub(`/search?q=osprey%20&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.statusCode, res.body).toBe(200);
      seen.push(...res.json().items.map((item: { slug: string }) => item.slug));
      cursor = res.json().nextCursor;
      if (!cursor) break;
    }
    expect(new Set(seen).size).toBe(COUNT);
    expect(seen.slice(0, COUNT / 10)).toEqual(slugs(...titled(COUNT / 10)));
    // The others: equal weights, newest first.
    expect(seen.slice(COUNT / 10, COUNT / 10 + 3)).toEqual(slugs(COUNT - 1, COUNT - 2, COUNT - 3));
  });

  it('finds the entries a narrow filter keeps even when they are not among a common word’s heaviest', async () => {
    expect(await publicSlugs('osprey ', '&type=page')).toEqual(slugs(9, 8, 7));
    expect(await publicSlugs('kite osprey ', '&type=page')).toEqual(slugs(9, 8, 7));
  });

  it('reads a prefix heaviest first among its words, with a rare word first or the filter in the read', async () => {
    expect(await publicSlugs('osp')).toEqual(slugs(...titled(20)));
    expect(await publicSlugs('ospre')).toEqual(slugs(...titled(20)));
    // A rare word read first, the prefix looked up among its entries; a common word with a
    // prefix: the prefix read first, with the filter in the read.
    expect(await publicSlugs('merlin osp')).toEqual(slugs(251, 5));
    expect(await publicSlugs('kite osp', '&type=page')).toEqual(slugs(9, 8, 7));
    expect(await publicSlugs('osp ')).toEqual([]);
  });

  it('intersects a rare word with a common one, and two common words', async () => {
    expect(await publicSlugs('merlin osprey ')).toEqual(slugs(251, 5));
    expect(await publicSlugs('osprey merl')).toEqual(slugs(251, 5));
    expect(await publicSlugs('kite osprey ')).toEqual(slugs(...titled(20)));
    expect(await publicSlugs('kite osprey missing ')).toEqual([]);
  });
});
