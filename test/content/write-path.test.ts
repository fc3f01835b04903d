import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { startContentWorld, defaultSiteContext, storedEntryDoc, type ContentWorld, type Entry } from './support.ts';
import { createApiKey } from '../support/access.ts';
import { PLATFORM_KEY_CAPABILITIES } from '../platform/support.ts';
import { contentCollections } from '../../services/content/model.ts';
import { storedGeneration } from '../../services/core/public-generation.ts';
import { ENTRY_COUNTS_ID, reconcileEntryCounts } from '../../services/content/entry-counts.ts';
import { SITE_STATE_COLLECTION } from '../../services/core/site-state.ts';
import { accessCollections } from '../../services/access/model.ts';
import { multipartBody, pdfOfSize } from '../media/support.ts';

// Issue 22: every operation that changes an entry goes through the one write path
// (services/content/write-path.ts) and so has the same effects, whatever the surface.

let cw: ContentWorld;
let siteId: string;
let operatorKey: string;
beforeAll(async () => {
  cw = await startContentWorld();
  siteId = (await defaultSiteContext(cw.world)).site._id;
  operatorKey = (await createApiKey(cw.world, { capabilities: PLATFORM_KEY_CAPABILITIES })).key;
});
afterAll(async () => cw?.close());

const db = () => cw.world.services.workspaceDb(cw.world.defaultWorkspace);
const stored = (id: string) => contentCollections(db()).entries.findOne({ _id: id });
const revisions = (id: string) => contentCollections(db()).revisions.countDocuments({ entryId: id });
const auditRows = () => accessCollections(db()).audit.countDocuments({ agg: { $exists: false } });
const lastAuditRow = async () =>
  (
    await accessCollections(db())
      .audit.find({ agg: { $exists: false } })
      .sort({ _id: -1 })
      .limit(1)
      .toArray()
  )[0]!;
const generation = () => storedGeneration(db(), siteId);
const eventsOf = (id: string, from: number) =>
  cw.events
    .slice(from)
    .filter((e) => e.data.id === id)
    .map((e) => e.event);
const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();

/** One MCP tool call (the same operation as REST, through `/api/mcp`): its answer as REST would give it. */
async function mcp(tool: string, args: Record<string, unknown>, key = cw.key): Promise<{ statusCode: number; json: () => Record<string, unknown> }> {
  const res = await cw.world.app.inject({
    method: 'POST',
    url: '/api/mcp',
    headers: { authorization: `Bearer ${key}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: args } },
  });
  const answer = res.json() as { result: { isError?: boolean; content: Array<{ text: string }> } };
  const body = JSON.parse(answer.result.content[0]!.text) as Record<string, unknown>;
  return { statusCode: answer.result.isError ? Number(body.status ?? 500) : 200, json: () => body };
}

type Surface = 'rest' | 'mcp';
interface Case {
  name: string;
  /** Prepares the entry the operation acts on. */
  setup(): Promise<Entry>;
  /** The operation on both surfaces: REST method, path, body and the MCP tool with its arguments. */
  rest(entry: Entry): [string, string, unknown?];
  mcp(entry: Entry): [string, Record<string, unknown>];
  events: string[];
  /** The public read of the entry's slug answers this status afterwards (null: not public before or after). */
  publicAfter?: number;
}

async function published(title: string): Promise<Entry> {
  const entry = await cw.create({ title });
  return (await cw.manage('POST', `/content/${entry.id}/publish`)).json();
}
async function taggedPost(title: string): Promise<{ entry: Entry; tagId: string }> {
  const tag = (await cw.manage('POST', '/taxonomies/tag/terms', { name: `tag ${title}` })).json();
  const entry = await published(title);
  const tagged = (await cw.manage('PUT', `/content/${entry.id}/terms`, { terms: { tag: [tag.id] } })).json();
  return { entry: tagged, tagId: tag.id };
}
const tags = new Map<string, string>();

const CASES: Case[] = [
  {
    name: 'update (working revision of a draft)',
    setup: () => cw.create({ title: 'Upd' }),
    rest: (e) => ['PATCH', `/content/${e.id}`, { title: 'Upd 2' }],
    mcp: (e) => ['content_update', { id: e.id, title: 'Upd 2' }],
    events: ['content.updated'],
  },
  {
    name: 'PATCH status published',
    setup: () => cw.create({ title: 'Patchpub' }),
    rest: (e) => ['PATCH', `/content/${e.id}`, { status: 'published' }],
    mcp: (e) => ['content_update', { id: e.id, status: 'published' }],
    events: ['content.updated', 'content.published'],
    publicAfter: 200,
  },
  {
    name: 'publish',
    setup: () => cw.create({ title: 'Pub' }),
    rest: (e) => ['POST', `/content/${e.id}/publish`, {}],
    mcp: (e) => ['content_publish', { id: e.id }],
    events: ['content.published'],
    publicAfter: 200,
  },
  {
    name: 'unpublish',
    setup: () => published('Unpub'),
    rest: (e) => ['POST', `/content/${e.id}/unpublish`, {}],
    mcp: (e) => ['content_unpublish', { id: e.id }],
    events: ['content.unpublished'],
    publicAfter: 404,
  },
  {
    name: 'schedule',
    setup: () => cw.create({ title: 'Sched' }),
    rest: (e) => ['PUT', `/content/${e.id}/schedule`, { publishOn: inSeconds(3600), unpublishOn: null }],
    mcp: (e) => ['content_schedule', { id: e.id, publishOn: inSeconds(3600), unpublishOn: null }],
    events: ['content.updated'],
  },
  {
    name: 'terms',
    setup: () => published('Terms'),
    rest: (e) => ['PUT', `/content/${e.id}/terms`, { terms: { tag: [] } }],
    mcp: (e) => ['content_terms_put', { id: e.id, terms: { tag: [] } }],
    events: ['content.updated'],
    publicAfter: 200,
  },
  {
    name: 'header reference',
    setup: () => published('Header'),
    rest: (e) => ['PUT', `/content/${e.id}/header-ref`, { headerRef: { mode: 'none' } }],
    mcp: (e) => ['content_headerRef_put', { id: e.id, headerRef: { mode: 'none' } }],
    events: ['content.updated'],
    publicAfter: 200,
  },
  {
    name: 'move to trash',
    setup: () => published('Trashed'),
    rest: (e) => ['DELETE', `/content/${e.id}`],
    mcp: (e) => ['content_delete', { id: e.id }],
    events: ['content.deleted'],
    publicAfter: 404,
  },
  {
    name: 'restore from trash',
    setup: async () => {
      const entry = await cw.create({ title: 'Restored' });
      await cw.manage('DELETE', `/content/${entry.id}`);
      return (await stored(entry.id)) as unknown as Entry;
    },
    rest: (e) => ['POST', '/trash/restore', { kind: 'entry', id: e._id ?? e.id }],
    mcp: (e) => ['trash_restore', { kind: 'entry', id: e._id ?? e.id }],
    events: ['content.updated'],
  },
  {
    name: 'delete a term the entry has',
    setup: async () => {
      const { entry, tagId } = await taggedPost(`Termdel ${Math.random()}`);
      tags.set(entry.id, tagId);
      return entry;
    },
    rest: (e) => ['DELETE', `/taxonomies/tag/terms/${tags.get(e.id)}`],
    mcp: (e) => ['terms_delete', { slug: 'tag', id: tags.get(e.id) }],
    events: ['content.updated'],
    publicAfter: 200,
  },
];

const idOf = (e: Entry) => String(e._id ?? e.id);

describe('one write path: the same effects for every content-changing operation, on every surface', () => {
  for (const surface of ['rest', 'mcp'] as Surface[]) {
    for (const c of CASES) {
      it(`${surface}: ${c.name} → version +1, one revision, ${c.events.join(' + ')}, one audit row, the public read changed at once`, async () => {
        const entry = await c.setup();
        const id = idOf(entry);
        const before = (await stored(id))!;
        const slug = before.live?.slug ?? before.slug;
        // Warm the public cache so "changed at the next request" means invalidated, not merely read.
        const publicBefore = await cw.pub(`/content/${slug}`);
        await cw.pub(`/content/${slug}`);
        const [revBefore, genBefore, eventsFrom] = [await revisions(id), await generation(), cw.events.length];
        await cw.world.services.audit.settled();
        const auditBefore = await auditRows();

        const res: LightMyRequestResponse | Awaited<ReturnType<typeof mcp>> =
          surface === 'rest' ? await cw.manage(...(c.rest(entry) as [string, string, unknown])) : await mcp(...c.mcp(entry));
        expect(res.statusCode, JSON.stringify(res.json())).toBeLessThan(300);

        const after = (await stored(id))!;
        expect(after.version).toBe(before.version + 1);
        expect(await revisions(id)).toBe(revBefore + 1);
        expect(eventsOf(id, eventsFrom)).toEqual(c.events);
        // One audit row for the operation (the runner's, whatever the surface): the entry is its target, or (a term's deletion) an entry it affected.
        await cw.world.services.audit.settled();
        expect(await auditRows(), c.name).toBe(auditBefore + 1);
        const row = await lastAuditRow();
        expect(row.target?.id === id || (row.summary as { affected?: { entry?: number } }).affected?.entry === 1, JSON.stringify(row)).toBe(true);
        const entryCases = c.publicAfter !== undefined || publicBefore.statusCode === 200;
        if (entryCases) expect(await generation()).toBeGreaterThan(genBefore);
        if (c.publicAfter !== undefined) {
          const publicNow = await cw.pub(`/content/${after.live?.slug ?? slug}`);
          expect(publicNow.statusCode).toBe(c.publicAfter);
        }
      });
    }
  }

  it('scope: every operation on an entry outside a scoped key is a 401 on both surfaces and changes nothing', async () => {
    const scoped = await cw.keyWith(['content:read', 'content:create', 'content:update', 'content:delete', 'content:publish'], { types: ['page'] });
    for (const c of CASES) {
      const entry = await c.setup(); // posts: outside a key scoped to pages
      const id = idOf(entry);
      const before = (await stored(id))!;
      const revBefore = await revisions(id);
      const eventsFrom = cw.events.length;
      const rest = c.rest(entry);
      const viaRest = await cw.manage(rest[0], rest[1], rest[2], scoped);
      const viaMcp = await mcp(...c.mcp(entry), scoped);
      expect([viaRest.statusCode, viaMcp.statusCode], c.name).toEqual([401, 401]);
      const after = (await stored(id))!;
      expect(after.version, c.name).toBe(before.version);
      expect(await revisions(id), c.name).toBe(revBefore);
      expect(eventsOf(id, eventsFrom), c.name).toEqual([]);
    }
  });

  it('quota: create and restore take from the kept counters; over the site limit both are a 403 and nothing is written', async () => {
    const trashed = await cw.create({ title: 'Quota trashed' });
    await cw.manage('DELETE', `/content/${trashed.id}`);
    const live = await contentCollections(db()).entries.countDocuments({ siteId, trashedAt: null });
    // The counters hold the live entries (the periodic pass recounts them to the same figure).
    expect((await reconcileEntryCounts(db())).sites[siteId]).toBe(live);
    const setQuota = (entries: number | null) =>
      cw.world.app.inject({
        method: 'PUT',
        url: `/api/manage/v1/sites/${siteId}/quotas`,
        headers: { authorization: `Bearer ${operatorKey}` },
        payload: { quotas: { entries } },
      });
    expect((await setQuota(live)).statusCode).toBe(200);
    try {
      const create = await cw.manage('POST', '/content', { title: 'Over the quota' });
      expect(create.statusCode).toBe(403);
      const viaMcp = await mcp('content_create', { title: 'Over the quota' });
      expect(viaMcp.statusCode).toBe(403);
      const restore = await cw.manage('POST', '/trash/restore', { kind: 'entry', id: trashed.id });
      expect(restore.statusCode).toBe(403);
      expect((await stored(trashed.id))!.trashedAt).not.toBeNull();
      expect(await contentCollections(db()).entries.countDocuments({ siteId, trashedAt: null })).toBe(live);
      // Trashing one frees a place: the restore then fits.
      const spare = (await contentCollections(db()).entries.findOne({ siteId, trashedAt: null }))!;
      expect((await cw.manage('DELETE', `/content/${spare._id}`)).statusCode).toBe(200);
      expect((await cw.manage('POST', '/trash/restore', { kind: 'entry', id: trashed.id })).statusCode).toBe(200);
    } finally {
      await setQuota(null);
    }
  });

  it('quota without a limit: a create moves no counter; the usage figure finds it (one recount, then O(1)); trash, restore and purge move them', async () => {
    type Counts = { _id: string; total: number; trashed: number; sites: Record<string, number>; reconciledAt: Date };
    const countsDoc = async () => (await db().collection<Counts>(SITE_STATE_COLLECTION).findOne({ _id: ENTRY_COUNTS_ID }))!;
    const live = () => contentCollections(db()).entries.countDocuments({ siteId, trashedAt: null });
    const usage = async () =>
      (await cw.world.app.inject({ method: 'GET', url: `/api/manage/v1/sites/${siteId}/usage`, headers: { authorization: `Bearer ${operatorKey}` } })).json()
        .quotas.entries.used as number;
    await reconcileEntryCounts(db());
    const start = await countsDoc();
    const first = await cw.manage('POST', '/content', { title: 'Uncounted', slug: 'uncounted-create' });
    expect(first.statusCode).toBe(201);
    expect((await countsDoc()).sites[siteId]).toBe(start.sites[siteId]); // no $inc on the create
    // The usage figure sees the counters no longer account for the collection: it recounts once and stores it.
    expect(await usage()).toBe(await live());
    const recounted = await countsDoc();
    expect(recounted.sites[siteId]).toBe((start.sites[siteId] ?? 0) + 1);
    expect(recounted.reconciledAt.getTime()).toBeGreaterThan(start.reconciledAt.getTime());
    // Now they agree: the next read recounts nothing (same stored date).
    expect(await usage()).toBe(await live());
    expect((await countsDoc()).reconciledAt).toEqual(recounted.reconciledAt);
    // Trash, restore and purge move the counters themselves (live ↔ trashed), so the figure stays exact without a recount.
    const id = first.json().id as string;
    expect((await cw.manage('DELETE', `/content/${id}`)).statusCode).toBe(200);
    expect(await countsDoc()).toMatchObject({ total: recounted.total - 1, trashed: recounted.trashed + 1 });
    expect(await usage()).toBe(await live());
    expect((await cw.manage('POST', '/trash/restore', { kind: 'entry', id })).statusCode).toBe(200);
    expect(await countsDoc()).toMatchObject({ total: recounted.total, trashed: recounted.trashed });
    expect((await cw.manage('DELETE', `/content/${id}`)).statusCode).toBe(200);
    expect((await cw.manage('DELETE', `/trash?kind=entry&id=${id}`)).statusCode).toBe(200);
    expect(await countsDoc()).toMatchObject({ total: recounted.total - 1, trashed: recounted.trashed });
    expect(await usage()).toBe(await live());
    expect((await countsDoc()).reconciledAt).toEqual(recounted.reconciledAt);
    // A taken slug writes nothing and counts nothing.
    expect((await cw.manage('POST', '/content', { title: 'Taken', slug: 'uncounted-create-2' })).statusCode).toBe(201);
    expect((await cw.manage('POST', '/content', { title: 'Taken again', slug: 'uncounted-create-2' })).statusCode).toBe(409);
    expect(await usage()).toBe(await live());
  });

  it('a limit set after uncounted creates: the first take recounts (once), so the limit holds exactly', async () => {
    const setQuota = (entries: number | null) =>
      cw.world.app.inject({
        method: 'PUT',
        url: `/api/manage/v1/sites/${siteId}/quotas`,
        headers: { authorization: `Bearer ${operatorKey}` },
        payload: { quotas: { entries } },
      });
    await reconcileEntryCounts(db());
    for (const n of [1, 2, 3]) expect((await cw.manage('POST', '/content', { title: `Uncounted before a limit ${n}` })).statusCode).toBe(201);
    const live = await contentCollections(db()).entries.countDocuments({ siteId, trashedAt: null });
    expect((await setQuota(live + 2)).statusCode).toBe(200);
    try {
      const results = await Promise.all(Array.from({ length: 6 }, (_, n) => cw.manage('POST', '/content', { title: `Under a limit ${n}` })));
      expect(results.filter((r) => r.statusCode === 201)).toHaveLength(2);
      expect(results.filter((r) => r.statusCode === 403)).toHaveLength(4);
      expect(await contentCollections(db()).entries.countDocuments({ siteId, trashedAt: null })).toBe(live + 2);
    } finally {
      await setQuota(null);
    }
  });

  it("the public generation: a draft's insert leaves it alone, a published entry's insert moves it (and the public read shows it at once)", async () => {
    const ctx = await defaultSiteContext(cw.world); // its database is the followed one, as every writer's
    const doc = (status: 'draft' | 'published', slug: string) => storedEntryDoc(siteId, { title: slug, slug, published: status === 'published' });
    await cw.pub('/content/inserted-published'); // a 404 held by the cache until the generation moves
    const start = await generation();
    expect((await cw.manage('POST', '/content', { title: 'Draft insert' })).statusCode).toBe(201);
    await contentCollections(ctx.db).entries.insertOne(doc('draft', 'inserted-draft'));
    expect(await generation()).toBe(start);
    await contentCollections(ctx.db).entries.insertOne(doc('published', 'inserted-published'));
    expect(await generation()).toBe(start + 1);
    expect((await cw.pub('/content/inserted-published')).statusCode).toBe(200);
    // An update of a draft still moves it (the before-state of an update may have been public).
    expect((await contentCollections(ctx.db).entries.updateOne({ slug: 'inserted-draft', siteId }, { $set: { title: 'changed' } })).modifiedCount).toBe(1);
    expect(await generation()).toBe(start + 2);
  });

  it('of the site_state documents only the languages are public: a key made (the access version) leaves the generation, a language moves it', async () => {
    const start = await generation();
    await createApiKey(cw.world, { capabilities: ['content:read'], name: 'generation probe' });
    expect(await generation()).toBe(start);
    expect((await cw.manage('POST', '/languages', { code: 'nl', name: 'Nederlands' })).statusCode).toBe(201);
    expect(await generation()).toBe(start + 1);
  });
});

describe('issue 22 bugs', () => {
  it('PATCH status draft after a schedule settles it: publishOn cleared, the workflow can publish nothing', async () => {
    const entry = await cw.create({ title: 'Editor says draft' });
    const scheduled = (await cw.manage('PUT', `/content/${entry.id}/schedule`, { publishOn: inSeconds(3600), unpublishOn: null })).json();
    expect(scheduled).toMatchObject({ status: 'scheduled' });
    const draft = await cw.manage('PATCH', `/content/${entry.id}`, { status: 'draft' });
    expect(draft.statusCode).toBe(200);
    expect(draft.json()).toMatchObject({ status: 'draft', publishOn: null, unpublishOn: null });
    expect((await stored(entry.id))!.schedule).toBeNull();
  });

  it('status scheduled needs a future publishOn: 400 and nothing changed otherwise', async () => {
    const entry = await cw.create({ title: 'Scheduled forever?' });
    const res = await cw.manage('PATCH', `/content/${entry.id}`, { status: 'scheduled' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/publishOn/);
    expect((await stored(entry.id))!).toMatchObject({ status: 'draft', version: 1 });
    const past = await cw.manage('PUT', `/content/${entry.id}/schedule`, { publishOn: inSeconds(-60), unpublishOn: null });
    expect(past.statusCode).toBe(400);
    expect((await stored(entry.id))!).toMatchObject({ status: 'draft', version: 1, schedule: null });
    // With a date to come it is accepted.
    await cw.manage('PUT', `/content/${entry.id}/schedule`, { publishOn: inSeconds(3600), unpublishOn: null });
    await cw.manage('PATCH', `/content/${entry.id}`, { status: 'draft' });
    expect((await cw.manage('PATCH', `/content/${entry.id}`, { status: 'scheduled' })).statusCode).toBe(400);
  });

  it('deleting a term versions, revises and announces every entry it changes', async () => {
    const tag = (await cw.manage('POST', '/taxonomies/tag/terms', { name: 'Many' })).json();
    const entries = [];
    for (let i = 0; i < 3; i++) {
      const e = await published(`Tagged ${i}`);
      entries.push((await cw.manage('PUT', `/content/${e.id}/terms`, { terms: { tag: [tag.id] } })).json() as Entry);
    }
    const from = cw.events.length;
    const res = await cw.manage('DELETE', `/taxonomies/tag/terms/${tag.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ deleted: true, entriesChanged: 3, job: null });
    for (const e of entries) {
      const after = (await stored(e.id))!;
      expect(after.version).toBe(e.version + 1);
      expect(after.terms.tag).toEqual([]);
      expect(eventsOf(e.id, from)).toEqual(['content.updated']);
      const history = (await cw.manage('GET', `/content/${e.id}/revisions`)).json().data;
      expect(history[0]).toMatchObject({ version: e.version + 1, note: expect.stringMatching(/term tag\/many deleted/) });
      // Its effects done, the batch cleared the owed marker (one updateMany for the group).
      expect(after.pending ?? null).toBeNull();
    }
  });

  it('a key scoped to pages cannot delete a term or a taxonomy used by posts: 401, nothing changed', async () => {
    const tax = await cw.manage('POST', '/taxonomies', { slug: 'topic', label: 'Topic', types: ['post', 'page'] });
    expect(tax.statusCode).toBe(201);
    const term = (await cw.manage('POST', '/taxonomies/topic/terms', { name: 'Shared' })).json();
    const post = await published('Scoped post');
    await cw.manage('PUT', `/content/${post.id}/terms`, { terms: { topic: [term.id] } });
    const page = await cw.create({ title: 'Scoped page', type: 'page' });
    await cw.manage('PUT', `/content/${page.id}/terms`, { terms: { topic: [term.id] } });
    const postBefore = (await stored(post.id))!;
    const pageBefore = (await stored(page.id))!;
    const scoped = await cw.keyWith(['content:read', 'content:publish', 'settings:manage'], { types: ['page'] });
    const from = cw.events.length;

    expect((await cw.manage('DELETE', `/taxonomies/topic/terms/${term.id}`, undefined, scoped)).statusCode).toBe(401);
    expect((await cw.manage('DELETE', '/taxonomies/topic', undefined, scoped)).statusCode).toBe(401);
    expect((await cw.manage('GET', `/taxonomies/topic/terms/${term.id}`)).statusCode).toBe(200);
    expect((await cw.manage('GET', '/taxonomies/topic')).statusCode).toBe(200);
    expect((await stored(post.id))!).toMatchObject({ version: postBefore.version, terms: { topic: [term.id] } });
    expect((await stored(page.id))!).toMatchObject({ version: pageBefore.version, terms: { topic: [term.id] } });
    expect(cw.events.slice(from)).toEqual([]);

    // The unscoped key deletes the taxonomy: both entries versioned and announced.
    const done = await cw.manage('DELETE', '/taxonomies/topic');
    expect(done.json()).toEqual({ deleted: true, entriesChanged: 2, job: null });
    expect((await stored(post.id))!.version).toBe(postBefore.version + 1);
    expect((await stored(post.id))!.terms).not.toHaveProperty('topic');
  });

  it('restoring media from the trash emits media.restored', async () => {
    const body = multipartBody('doc.pdf', pdfOfSize(512));
    const upload = await cw.world.app.inject({
      method: 'POST',
      url: '/api/manage/v1/media',
      headers: { authorization: `Bearer ${cw.key}`, ...body.headers },
      payload: body.payload,
    });
    expect(upload.statusCode, upload.body).toBe(201);
    const media = upload.json();
    expect((await cw.manage('DELETE', `/media/${media.id}`)).statusCode).toBe(200);
    const from = cw.events.length;
    expect((await cw.manage('POST', '/trash/restore', { kind: 'media', id: media.id })).statusCode).toBe(200);
    expect(cw.events.slice(from).map((e) => e.event)).toEqual(['media.restored']);
  });

  it('GET /trash pages with a cursor: every trashed item once, across kinds', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const e = await cw.create({ title: `Bin ${i}` });
      await cw.manage('DELETE', `/content/${e.id}`);
      ids.push(e.id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 100; page++) {
      const res = await cw.manage('GET', `/trash?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body.data.length).toBeLessThanOrEqual(2);
      seen.push(...body.data.map((d: { kind: string; id: string }) => `${d.kind}:${d.id}`));
      cursor = body.page.nextCursor;
      if (!cursor) break;
    }
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of ids) expect(seen).toContain(`entry:${id}`);
    expect((await cw.manage('GET', '/trash?cursor=forged')).statusCode).toBe(400);
  });
});

describe('the write path is the only writer of entries', () => {
  it('no module but services/content/write-path.ts writes content_entries', async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const root = new URL('../../', import.meta.url).pathname;
    const files = (dir: string): string[] =>
      readdirSync(join(root, dir), { withFileTypes: true }).flatMap((d) =>
        d.isDirectory() ? files(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
      );
    const writes =
      /\bentries\.(insertOne|insertMany|updateOne|updateMany|replaceOne|deleteOne|deleteMany|findOneAndUpdate|findOneAndReplace|findOneAndDelete|bulkWrite)\(/;
    const writers = [...files('services'), ...files('activities')].filter((file) => writes.test(readFileSync(join(root, file), 'utf8')));
    expect(writers).toEqual(['services/content/write-path.ts']);
  });
});
