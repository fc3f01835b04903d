import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContentWorld, defaultSiteContext, signIn, storedEntryDoc, type ContentWorld, type Entry } from './support.ts';
import { backfillSearch, frequencyId, SEARCH_COLLECTION, syncEntriesSearch } from '../../services/content/search-index.ts';
import { parseQuery, SEARCH_INDEX_VERSION, tokenize, weighWords } from '../../services/content/search-tokens.ts';
import type { BlockDocument } from '../../services/content/model.ts';
import { CAPABILITIES } from '../../services/core/capabilities.ts';
import { storedGeneration } from '../../services/core/public-generation.ts';

/** Search (docs/content.md, "Search") on the three surfaces, against the real engines. */
let cw: ContentWorld;
beforeAll(async () => {
  // Commands watched: a site's concurrent writes share their postings' commands (below).
  cw = await startContentWorld({ monitorCommands: true });
});
afterAll(async () => cw?.close());

const body = (...paragraphs: string[]): BlockDocument => ({
  version: 1,
  blocks: paragraphs.map((text) => ({ type: 'paragraph', text, url: 'https://example.test/ignored' })),
});
const publish = (e: Entry) => cw.manage('POST', `/content/${e.id}/publish`);
const slugsOf = (items: Array<{ slug: string }>) => items.map((item) => item.slug);
/** The slugs each surface answers for a query, best first. */
async function publicSlugs(q: string, extra = ''): Promise<string[]> {
  const res = await cw.pub(`/search?q=${encodeURIComponent(q)}${extra}`);
  expect(res.statusCode, res.body).toBe(200);
  return slugsOf(res.json().items);
}
/** How many deletes of postings `run` and the groups it queued sent (one per group that replaced postings). */
async function postingDeletesDuring(run: () => Promise<void>): Promise<number> {
  let deletes = 0;
  const watch = (event: { commandName: string; command: Record<string, unknown> }) => {
    if (event.commandName === 'delete' && event.command.delete === SEARCH_COLLECTION) deletes++;
  };
  cw.world.services.mongo.on('commandStarted', watch);
  try {
    await run();
    await cw.world.services.searchSync.settled();
  } finally {
    cw.world.services.mongo.off('commandStarted', watch);
  }
  return deletes;
}

async function manageSlugs(q: string, extra = '', key?: string): Promise<string[]> {
  const res = await cw.manage('GET', `/content?search=${encodeURIComponent(q)}${extra}`, undefined, key);
  expect(res.statusCode, res.body).toBe(200);
  return slugsOf(res.json().data);
}
async function graphqlSlugs(q: string, args = ''): Promise<string[]> {
  const res = await cw.world.app.inject({
    method: 'POST',
    url: '/api/v1/graphql',
    payload: { query: `query ($q: String!) { search(q: $q${args}) { items { slug } } }`, variables: { q } },
  });
  expect(res.statusCode, res.body).toBe(200);
  return slugsOf(res.json().data.search.items);
}
/** The same answer on the three surfaces (Management sees the working revisions, published here). */
async function everywhere(q: string): Promise<string[]> {
  const pub = await publicSlugs(q);
  expect(await graphqlSlugs(q)).toEqual(pub);
  expect(await manageSlugs(q, '&status=published')).toEqual(pub);
  return pub;
}

describe('the tokenizer', () => {
  it('lower-cases, strips diacritics, splits on anything but letters and digits, and reads the last word as a prefix', () => {
    expect(tokenize('Crème Brûlée, ÉTÉ 2024! naïve_co-op')).toEqual(['creme', 'brulee', 'ete', '2024', 'naive', 'co', 'op']);
    expect(tokenize('Straße Ωmega')).toEqual(['straße', 'ωmega']);
    expect(parseQuery('quick bro')).toEqual({ words: ['quick'], prefix: 'bro' });
    expect(parseQuery('quick brown ')).toEqual({ words: ['quick', 'brown'], prefix: null });
    expect(parseQuery('fox quick fox')).toEqual({ words: ['quick'], prefix: 'fox' });
    expect(parseQuery('.*')).toEqual({ words: [], prefix: null });
    // Links in blocks are not text; the title weighs more than the body.
    const weights = weighWords({ title: 'Falcon', slug: 'x', excerpt: null, blocks: body('falcon'), fields: {} });
    expect(weights.has('example')).toBe(false);
    expect(weighWords({ title: 'x', slug: 'x', excerpt: null, blocks: body('falcon'), fields: {} }).get('falcon')!).toBeLessThan(weights.get('falcon')!);
  });
});

describe('search', () => {
  let inTitle: Entry, inExcerpt: Entry, inBody: Entry, inField: Entry;

  beforeAll(async () => {
    inBody = await cw.create({ title: 'Birds of prey', slug: 'in-body', blocks: body('The <b>peregrine</b> falcon dives.') });
    inExcerpt = await cw.create({ title: 'Raptors', slug: 'in-excerpt', excerpt: 'A peregrine falcon guide' });
    inTitle = await cw.create({ title: 'Peregrine Falcon', slug: 'in-title' });
    inField = await cw.create({ title: 'Field notes', slug: 'in-field', fields: { subtitle: 'Peregrine sightings', link: 'https://peregrine.example' } });
    for (const e of [inBody, inExcerpt, inTitle, inField]) expect((await publish(e)).statusCode).toBe(200);
  });

  it('ranks a word in the title above the excerpt, the excerpt above the body, on every surface', async () => {
    expect(await everywhere('falcon')).toEqual(['in-title', 'in-excerpt', 'in-body']);
    expect(await everywhere('peregrine')).toEqual(['in-title', 'in-excerpt', 'in-field', 'in-body']);
    // Every word must be found; case and accents do not matter.
    expect(await everywhere('FALCON pérégrine')).toEqual(['in-title', 'in-excerpt', 'in-body']);
    expect(await everywhere('falcon sightings')).toEqual([]);
    // A link in a custom field or a block is not text.
    expect(await everywhere('example')).toEqual([]);
  });

  it('matches the last word as a prefix (search as you type), the others as whole words', async () => {
    expect(await everywhere('pereg')).toEqual(['in-title', 'in-excerpt', 'in-field', 'in-body']);
    expect(await everywhere('falcon gui')).toEqual(['in-excerpt']);
    expect(await everywhere('falc peregrine')).toEqual([]);
    // A query ending after its last word takes it whole.
    expect(await everywhere('pereg ')).toEqual([]);
    expect(await everywhere('!!!')).toEqual([]);
  });

  it('pages through the ranking with a cursor, on REST and GraphQL alike', async () => {
    const first = (await cw.pub('/search?q=peregrine&limit=2')).json();
    expect(slugsOf(first.items)).toEqual(['in-title', 'in-excerpt']);
    const next = (await cw.pub(`/search?q=peregrine&limit=2&cursor=${encodeURIComponent(first.nextCursor)}`)).json();
    expect(slugsOf(next.items)).toEqual(['in-field', 'in-body']);
    expect(next.nextCursor).toBeNull();
    const manage = (await cw.manage('GET', '/content?search=peregrine&limit=3')).json();
    expect(slugsOf(manage.data)).toEqual(['in-title', 'in-excerpt', 'in-field']);
    const rest = (await cw.manage('GET', `/content?search=peregrine&limit=3&cursor=${encodeURIComponent(manage.page.nextCursor)}`)).json();
    expect(slugsOf(rest.data)).toEqual(['in-body']);
    // A cursor of another list is refused.
    expect((await cw.manage('GET', `/content?search=peregrine&cursor=${encodeURIComponent(first.nextCursor)}`)).statusCode).toBe(400);
  });

  it('searches one locale at a time on the Public API, every locale on the Management API unless one is named', async () => {
    expect((await cw.manage('POST', '/languages', { code: 'fr', name: 'Français' })).statusCode).toBe(201);
    const fr = await cw.create({ title: 'Le faucon pèlerin', slug: 'faucon', locale: 'fr' });
    await publish(fr);
    expect(await publicSlugs('faucon')).toEqual([]);
    expect(await publicSlugs('faucon', '&locale=fr')).toEqual(['faucon']);
    expect(await publicSlugs('pelerin', '&locale=fr')).toEqual(['faucon']);
    expect(await graphqlSlugs('faucon', ', locale: "fr"')).toEqual(['faucon']);
    expect(await manageSlugs('faucon')).toEqual(['faucon']);
    expect(await manageSlugs('faucon', '&locale=en')).toEqual([]);
    expect(await manageSlugs('faucon', '&locale=fr')).toEqual(['faucon']);
  });

  it('filters by type and by term', async () => {
    const page = await cw.create({ type: 'page', title: 'Falcon page', slug: 'falcon-page' });
    await publish(page);
    const tag = (await cw.manage('POST', '/taxonomies/tag/terms', { name: 'Raptor' })).json();
    expect((await cw.manage('PUT', `/content/${inBody.id}/terms`, { terms: { tag: [tag.id] } })).statusCode).toBe(200);
    await publish(inBody);

    expect(await publicSlugs('falcon')).toEqual(['falcon-page', 'in-title', 'in-excerpt', 'in-body']);
    expect(await publicSlugs('falcon', '&type=page')).toEqual(['falcon-page']);
    expect(await publicSlugs('falcon', '&type=post')).toEqual(['in-title', 'in-excerpt', 'in-body']);
    expect(await publicSlugs('falcon', `&term=${tag.id}`)).toEqual(['in-body']);
    expect(await graphqlSlugs('falcon', `, type: "page"`)).toEqual(['falcon-page']);
    expect(await graphqlSlugs('falcon', `, term: "${tag.id}"`)).toEqual(['in-body']);
    expect(await manageSlugs('falcon', '&type=page')).toEqual(['falcon-page']);
    expect(await manageSlugs('falcon', `&term=${tag.id}`)).toEqual(['in-body']);
    // `term` filters a search: alone it is a 400.
    const alone = await cw.manage('GET', `/content?term=${tag.id}`);
    expect(alone.statusCode).toBe(400);
    expect(alone.json().error).toMatch(/^term/);
    // A key scoped to pages finds only pages.
    const pagesOnly = await cw.keyWith(['content:read'], { types: ['page'] });
    expect(await manageSlugs('falcon', '', pagesOnly)).toEqual(['falcon-page']);
    await cw.manage('DELETE', `/content/${page.id}`);
  });

  it('never finds an unpublished entry on the Public API; finds it in the Management API and in an editor preview', async () => {
    const draft = await cw.create({ title: 'Secret gyrfalcon plans', slug: 'draft-gyr' });
    expect(await publicSlugs('gyrfalcon')).toEqual([]);
    expect(await graphqlSlugs('gyrfalcon')).toEqual([]);
    expect(await manageSlugs('gyrfalcon')).toEqual(['draft-gyr']);
    // Published, then unpublished: gone again from the public side.
    await publish(draft);
    expect(await publicSlugs('gyrfalcon')).toEqual(['draft-gyr']);
    expect((await cw.manage('POST', `/content/${draft.id}/unpublish`)).statusCode).toBe(200);
    expect(await publicSlugs('gyrfalcon')).toEqual([]);
    expect(await graphqlSlugs('gyrfalcon')).toEqual([]);
    // A preview searches working revisions of published entries only: still nothing for a draft.
    const { cookie } = await signIn(cw.world);
    expect(slugsOf((await cw.pub('/search?q=gyrfalcon&preview=1', { cookie })).json().items)).toEqual([]);
  });

  it('finds updated text by its new words, not its old ones; the public side when it is published', async () => {
    const e = await cw.create({ title: 'Kestrel hovering', slug: 'kestrel' });
    await publish(e);
    expect((await cw.manage('PATCH', `/content/${e.id}`, { title: 'Merlin hovering' })).statusCode).toBe(200);
    expect(await manageSlugs('merlin')).toEqual(['kestrel']);
    expect(await manageSlugs('kestrel')).toEqual(['kestrel']); // the slug keeps the old word
    expect(await manageSlugs('kestrel hov')).toEqual(['kestrel']);
    // The public side keeps the published snapshot until the next publish; a preview shows the working one.
    expect(await publicSlugs('merlin')).toEqual([]);
    const { cookie } = await signIn(cw.world);
    expect(slugsOf((await cw.pub('/search?q=merlin&preview=1', { cookie })).json().items)).toEqual(['kestrel']);
    await publish(e);
    expect(await publicSlugs('merlin')).toEqual(['kestrel']);
    expect(await graphqlSlugs('merlin')).toEqual(['kestrel']);
    await cw.manage('PATCH', `/content/${e.id}`, { slug: 'bird-7', excerpt: 'small raptor' });
    await publish(e);
    expect(await everywhere('kestrel')).toEqual([]);
    expect(await everywhere('small raptor')).toEqual(['bird-7']);
  });

  it('finds every word of an entry in the view its first word was found in, edited since its publish or not', async () => {
    const edited = await cw.create({ title: 'Lanner stooping', slug: 'lanner-edited' });
    await publish(edited);
    await cw.manage('PATCH', `/content/${edited.id}`, { excerpt: 'changed since' }); // its words now in views p and w
    const asPublished = await cw.create({ title: 'Lanner stalling', slug: 'lanner-as-published' });
    await publish(asPublished); // its words in view b
    expect((await publicSlugs('lanner st')).sort()).toEqual(['lanner-as-published', 'lanner-edited']);
    expect((await manageSlugs('lanner st')).sort()).toEqual(['lanner-as-published', 'lanner-edited']);
    expect((await manageSlugs('lanner changed')).sort()).toEqual(['lanner-edited']);
    expect(await publicSlugs('lanner changed')).toEqual([]);
  });

  it('forgets a trashed entry at once, finds a restored one as a draft, and nothing of a purged one', async () => {
    const e = await cw.create({ title: 'Osprey fishing', slug: 'osprey' });
    await publish(e);
    expect(await everywhere('osprey')).toEqual(['osprey']);
    expect((await cw.manage('DELETE', `/content/${e.id}`)).statusCode).toBe(200);
    expect(await publicSlugs('osprey')).toEqual([]);
    expect(await graphqlSlugs('osprey')).toEqual([]);
    expect(await manageSlugs('osprey')).toEqual([]);
    expect((await cw.manage('POST', '/trash/restore', { kind: 'entry', id: e.id })).statusCode).toBe(200);
    expect(await manageSlugs('osprey')).toEqual(['osprey']);
    expect(await publicSlugs('osprey')).toEqual([]);
    await cw.manage('DELETE', `/content/${e.id}`);
    expect((await cw.manage('DELETE', `/trash?kind=entry&id=${e.id}`)).statusCode).toBe(200);
    const ctx = await defaultSiteContext(cw.world);
    await cw.world.services.searchSync.settled();
    expect(await ctx.db.collection(SEARCH_COLLECTION).countDocuments({ entryId: e.id })).toBe(0);
  });

  it('counts the entries that hold each word, in their working and published text, per locale, as entries change', async () => {
    const ctx = await defaultSiteContext(cw.world);
    const rows = ctx.db.collection<{ _id: string; w?: number; p?: number }>(SEARCH_COLLECTION);
    // Read once the writes' postings are in (a write answers before them: search-sync.ts).
    const held = async (count: 'w' | 'p', word: string) => {
      await cw.world.services.searchSync.settled();
      return (await rows.findOne({ _id: frequencyId(ctx.site._id, 'en', word) }))?.[count] ?? 0;
    };
    const e = await cw.create({ title: 'Lammergeier soaring', slug: 'bone-breaker' });
    expect([await held('w', 'lammergeier'), await held('p', 'lammergeier')]).toEqual([1, 0]);
    // Published as it is (postings of view `b`): the word is in both texts.
    await publish(e);
    expect([await held('w', 'lammergeier'), await held('p', 'lammergeier')]).toEqual([1, 1]);
    // The working revision moves away from the published one: each text counts its own words.
    await cw.manage('PATCH', `/content/${e.id}`, { title: 'Bearded vulture soaring' });
    expect([await held('p', 'lammergeier'), await held('w', 'lammergeier'), await held('w', 'bearded'), await held('p', 'bearded')]).toEqual([1, 0, 1, 0]);
    expect(await publicSlugs('lammergeier soaring')).toEqual(['bone-breaker']);
    expect(await manageSlugs('bearded soaring')).toEqual(['bone-breaker']);
    expect(await manageSlugs('lammergeier soaring')).toEqual([]);
    await cw.manage('DELETE', `/content/${e.id}`);
    expect([await held('p', 'lammergeier'), await held('w', 'bearded'), await held('w', 'soaring')]).toEqual([0, 0, 0]);
  });

  it('leaves the postings of the last state when writers of one entry race', async () => {
    const e = await cw.create({ title: 'Race start', slug: 'race' });
    const racers = Array.from({ length: 8 }, (_, i) => `racer${i}`);
    const results = await Promise.all(racers.map((word) => cw.manage('PATCH', `/content/${e.id}`, { title: `Contest ${word}` })));
    expect(results.map((res) => res.statusCode)).toEqual(racers.map(() => 200));
    const final = (await cw.manage('GET', `/content/${e.id}`)).json();
    const winner = final.title.split(' ')[1];
    const ctx = await defaultSiteContext(cw.world);
    await cw.world.services.searchSync.settled();
    // Its words (the row of view `f` left aside).
    const tokens = (await ctx.db.collection(SEARCH_COLLECTION).find({ siteId: ctx.site._id, entryId: e.id, view: 'w' }).toArray()).map(
      (posting) => posting.token as string,
    );
    expect(tokens.sort()).toEqual(['contest', 'race', winner].sort());
    for (const word of racers) expect(await manageSlugs(word)).toEqual(word === winner ? ['race'] : []);
  });

  it("gathers a site's postings: a search in the process writes what is queued first, and the group moves the public generation", async () => {
    const ctx = await defaultSiteContext(cw.world);
    const db = cw.world.services.workspaceDb({ dbName: ctx.workspace.dbName });
    const sync = cw.world.services.searchSync;
    await sync.settled();
    const doc = storedEntryDoc(ctx.site._id, { _id: '0000000000gatheredplover', title: 'Gathered plover', slug: 'gathered-plover', published: true });
    await db.collection<{ _id: string }>('content_entries').insertOne(doc as never);
    const generation = await storedGeneration(db, ctx.site._id);
    const queued = sync.index(db, ctx.site._id, { entryId: doc._id, doc, fresh: true });
    // The search's call: what is queued for its site is written now, not after the window.
    await sync.written(db, ctx.site._id);
    expect(await db.collection(SEARCH_COLLECTION).countDocuments({ entryId: doc._id })).toBeGreaterThan(0);
    await queued;
    expect(await storedGeneration(db, ctx.site._id)).toBeGreaterThan(generation);
    expect(await manageSlugs('gathered plover')).toEqual(['gathered-plover']);
    // A draft adds nothing to a public search: its group leaves the generation as it was.
    const draft = storedEntryDoc(ctx.site._id, { _id: '0000000000gathereddraft', title: 'Gathered dunlin', slug: 'gathered-dunlin', published: false });
    await db.collection<{ _id: string }>('content_entries').insertOne(draft as never);
    const before = await storedGeneration(db, ctx.site._id);
    await sync.index(db, ctx.site._id, { entryId: draft._id, doc: draft, fresh: true });
    expect(await storedGeneration(db, ctx.site._id)).toBe(before);
    expect(await manageSlugs('gathered dunlin')).toEqual(['gathered-dunlin']);
  });

  it("writes a site's concurrent changes' postings in groups, each write found by a search the moment it answers", async () => {
    // A key of its own: the file's other tests keep the default key's requests of the minute.
    const key = await cw.keyWith([...CAPABILITIES]);
    const names = ['alder', 'birch', 'cedar', 'dogwood', 'elm', 'fir', 'ginkgo', 'hazel', 'ivy', 'juniper', 'kapok', 'larch'];
    const made: string[] = [];
    for (const name of names) made.push((await cw.manage('POST', '/content', { title: `Arboretum ${name}`, slug: `tree-${name}` }, key)).json().id);
    // The drafts' postings are in, so the publishes replace them (a create and a publish in one group only insert).
    await cw.world.services.searchSync.settled();
    const deletes = await postingDeletesDuring(async () => {
      // Twelve publishes at once; each one's words are found the moment it answers.
      const found = await Promise.all(
        made.map(async (id, i) => {
          expect((await cw.manage('POST', `/content/${id}/publish`, undefined, key)).statusCode).toBe(200);
          return manageSlugs(names[i], '&status=published', key);
        }),
      );
      expect(found).toEqual(names.map((name) => [`tree-${name}`]));
    });
    // One delete of postings per group, not per write.
    expect(deletes).toBeGreaterThan(0);
    expect(deletes).toBeLessThan(names.length);
    const ctx = await defaultSiteContext(cw.world);
    const held = await ctx.db
      .collection<{ _id: string; w: number; p: number }>(SEARCH_COLLECTION)
      .findOne({ _id: frequencyId(ctx.site._id, 'en', 'arboretum') });
    expect([held?.w, held?.p]).toEqual([names.length, names.length]);
  });

  it('inserts the postings of an entry created and published in one group, deleting none', async () => {
    const key = await cw.keyWith([...CAPABILITIES]);
    await cw.world.services.searchSync.settled();
    const deletes = await postingDeletesDuring(async () => {
      const id = (await cw.manage('POST', '/content', { title: 'Quillwort meadow', slug: 'quillwort' }, key)).json().id;
      expect((await cw.manage('POST', `/content/${id}/publish`, undefined, key)).statusCode).toBe(200);
      expect(await manageSlugs('quillwort', '&status=published', key)).toEqual(['quillwort']);
    });
    expect(deletes).toBe(0);
    // One view for the published entry whose snapshot is its working text (`b`): the draft's postings (`w`) were never written.
    const ctx = await defaultSiteContext(cw.world);
    const views = await ctx.db.collection(SEARCH_COLLECTION).distinct('view', { siteId: ctx.site._id, token: 'quillwort' });
    expect(views).toEqual(['b']);
  });

  it("indexes a bulk create's entries at once as one at a time would, and an entry moved meanwhile from what it is now", async () => {
    const ctx = await defaultSiteContext(cw.world);
    const db = cw.world.services.workspaceDb({ dbName: ctx.workspace.dbName });
    const entries = db.collection<{ _id: string; version: number }>('content_entries');
    const rows = db.collection<{ _id: string; w?: number; entryId?: string }>(SEARCH_COLLECTION);
    const held = async (word: string) => (await rows.findOne({ _id: frequencyId(ctx.site._id, 'en', word) }))?.w ?? 0;
    const docs = ['ochre', 'umber', 'sienna'].map((word, i) =>
      storedEntryDoc(ctx.site._id, { _id: `0000000000${i}bulk${word}`, title: `Kestrel ${word}`, slug: `bulk-${word}`, published: false }),
    );
    await entries.insertMany(docs as never[]);
    // Another writer changes the third between its insert and its postings.
    await entries.updateOne({ _id: docs[2]._id }, { $set: { title: 'Hobby sienna', titleLower: 'hobby sienna' }, $inc: { version: 1 } });
    await syncEntriesSearch(
      db,
      ctx.site._id,
      docs.map((doc) => ({ entryId: doc._id, doc: doc as never, fresh: true })),
    );
    expect([await held('kestrel'), await held('hobby'), await held('sienna'), await held('ochre')]).toEqual([2, 1, 1, 1]);
    expect((await manageSlugs('kestrel')).sort()).toEqual(['bulk-ochre', 'bulk-umber']);
    expect(await manageSlugs('hobby sienna')).toEqual(['bulk-sienna']);
    // One entry at a time from what is stored now changes nothing: the same postings, the same counts.
    const ids = docs.map((doc) => doc._id);
    const bulk = await rows
      .find({ entryId: { $in: ids } })
      .sort({ _id: 1 })
      .toArray();
    for (const stored of await entries.find({ _id: { $in: ids } }).toArray()) {
      await syncEntriesSearch(db, ctx.site._id, [{ entryId: stored._id, doc: stored as never }]);
    }
    expect(
      await rows
        .find({ entryId: { $in: ids } })
        .sort({ _id: 1 })
        .toArray(),
    ).toEqual(bulk);
    expect([await held('kestrel'), await held('hobby'), await held('sienna'), await held('ochre')]).toEqual([2, 1, 1, 1]);
    await entries.deleteMany({ _id: { $in: ids } });
    await syncEntriesSearch(
      db,
      ctx.site._id,
      ids.map((entryId) => ({ entryId, doc: null })),
    );
  });

  it('backfills entries written before the index, resuming where it stopped', async () => {
    const ctx = await defaultSiteContext(cw.world);
    const entries = ctx.db.collection('content_entries');
    // Three entries as an older release wrote them: no postings.
    const docs = ['alpha', 'beta', 'gamma'].map((word, i) =>
      storedEntryDoc(ctx.site._id, { _id: `0000000000${i}old${word}`, title: `Harrier ${word}`, slug: `old-${word}`, published: true }),
    );
    await entries.insertMany(docs as never[]);
    expect(await publicSlugs('harrier')).toEqual([]);
    const db = cw.world.services.workspaceDb({ dbName: ctx.workspace.dbName });
    // The state says where the last pass stopped: a pass cut short resumes after it.
    await db
      .collection(SEARCH_COLLECTION)
      .updateOne({ _id: `~backfill:v${SEARCH_INDEX_VERSION}` as never }, { $set: { after: docs[0]._id, done: false } }, { upsert: true });
    expect(await backfillSearch(cw.world.services, db)).toBeGreaterThanOrEqual(2);
    const found = await manageSlugs('harrier');
    expect(found.sort()).toEqual(['old-beta', 'old-gamma']);
    // From the start: every entry, the live ones rewritten to the same postings.
    await db.collection(SEARCH_COLLECTION).deleteOne({ _id: `~backfill:v${SEARCH_INDEX_VERSION}` as never });
    const before = await db.collection(SEARCH_COLLECTION).countDocuments({ siteId: ctx.site._id });
    await backfillSearch(cw.world.services, db);
    expect((await publicSlugs('harrier')).sort()).toEqual(['old-alpha', 'old-beta', 'old-gamma']);
    expect(await db.collection(SEARCH_COLLECTION).countDocuments({ siteId: ctx.site._id })).toBeGreaterThan(before);
    expect(await backfillSearch(cw.world.services, db)).toBe(0);
  });

  it("moves an older index version's frequency rows (one per view) to this version's, and deletes them", async () => {
    const ctx = await defaultSiteContext(cw.world);
    const db = cw.world.services.workspaceDb({ dbName: ctx.workspace.dbName });
    const rows = db.collection<{ _id: string; n?: number; w?: number; p?: number; counted?: string[] }>(SEARCH_COLLECTION);
    const e = await cw.create({ title: 'Goshawk migration', slug: 'goshawk' });
    await publish(e);
    await cw.world.services.searchSync.settled();
    // As version 3 left them: a row per view (`n`), named without a count in the entry's row of view `f`.
    const old = `~df:${ctx.site._id}:b:en:goshawk`;
    await rows.insertOne({ _id: old, n: 1 });
    await rows.updateOne({ _id: `${e.id}:f` }, { $set: { counted: [old] } });
    await rows.deleteOne({ _id: frequencyId(ctx.site._id, 'en', 'goshawk') });
    await rows.deleteOne({ _id: `~backfill:v${SEARCH_INDEX_VERSION}` });
    await backfillSearch(cw.world.services, db);
    expect(await rows.findOne({ _id: old })).toBeNull();
    const now = await rows.findOne({ _id: frequencyId(ctx.site._id, 'en', 'goshawk') });
    expect([now?.w, now?.p]).toEqual([1, 1]);
    expect(await publicSlugs('goshawk migration')).toEqual(['goshawk']);
  });

  it('refuses bad input with a clear error', async () => {
    expect((await cw.pub('/search')).statusCode).toBe(400);
    expect((await cw.pub(`/search?q=${'x'.repeat(201)}`)).statusCode).toBe(400);
    expect((await cw.pub('/search?q=falcon&cursor=forged')).statusCode).toBe(400);
    expect((await cw.manage('GET', `/content?search=${'x'.repeat(201)}`)).json().error).toMatch(/search/);
  });
});

describe('the search collection', () => {
  it('is created on first use, not when a workspace is provisioned', async () => {
    const fresh = await startContentWorld();
    try {
      const ctx = await defaultSiteContext(fresh.world);
      const names = async () => (await ctx.db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
      expect(await names()).not.toContain(SEARCH_COLLECTION);
      await fresh.create({ title: 'First words' });
      await fresh.world.services.searchSync.settled();
      expect(await names()).toContain(SEARCH_COLLECTION);
      const indexes = (await ctx.db.collection(SEARCH_COLLECTION).listIndexes().toArray()).map((index) => index.key);
      expect(indexes).toContainEqual({ siteId: 1, view: 1, locale: 1, token: 1, w: -1, entryId: -1, type: 1 });
      expect(indexes).toContainEqual({ siteId: 1, entryId: 1, view: 1, token: 1, w: 1 });
    } finally {
      await fresh.close();
    }
  });
});
