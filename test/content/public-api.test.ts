import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContentWorld, signIn, type ContentWorld } from './support.ts';
import { MAX_QUERY_COST } from '../../services/content/graphql-cost.ts';
import { createRuntime } from '../../services/runtime.ts';
import { closeServices } from '../../services/core/services.ts';
import { freshWindow } from '../access/world-helpers.ts';
import { DESIGN_COLLECTION } from '../../services/core/design-documents.ts';
import type { CommandStartedEvent } from 'mongodb';

let cw: ContentWorld;
beforeAll(async () => {
  cw = await startContentWorld({ monitorCommands: true });
  await cw.manage('POST', '/languages', { code: 'fr', name: 'Français' });
  for (let i = 0; i < 5; i++) {
    const e = await cw.create({ title: `Public ${i}`, slug: `public-${i}`, type: i % 2 ? 'page' : 'post', fields: { n: i } });
    await cw.manage('POST', `/content/${e.id}/publish`);
  }
  await cw.create({ title: 'Draft only', slug: 'draft-only' });
  const fr = await cw.create({ title: 'Publique', slug: 'publique', locale: 'fr' });
  await cw.manage('POST', `/content/${fr.id}/publish`);
  await cw.manage('POST', '/menus', { slug: 'main', name: 'Main', items: [{ label: 'Home', url: '/' }] });
});
afterAll(async () => cw?.close());

const gql = (query: string, variables?: Record<string, unknown>, headers: Record<string, string> = {}) =>
  cw.world.app.inject({ method: 'POST', url: '/api/v1/graphql', payload: { query, variables }, headers });

describe('Public Content API', () => {
  it('lists published content only, in the public envelope, with limits and paging', async () => {
    const res = await cw.pub('/content');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['items', 'locale', 'nextCursor', 'total']);
    expect(body).toMatchObject({ total: 5, locale: 'en', nextCursor: null });
    expect(body.items.map((i: { slug: string }) => i.slug)).not.toContain('draft-only');
    expect(body.items.every((i: { status: string }) => i.status === 'published')).toBe(true);
    expect((await cw.pub('/content?type=page')).json().total).toBe(2);
    expect((await cw.pub('/content?slug=public-3')).json().items.map((i: { slug: string }) => i.slug)).toEqual(['public-3']);
    expect((await cw.pub('/content?limit=101')).statusCode).toBe(400);
    expect((await cw.pub('/content?limit=0')).statusCode).toBe(400);
    const first = (await cw.pub('/content?limit=2')).json();
    const second = (await cw.pub(`/content?limit=2&cursor=${encodeURIComponent(first.nextCursor)}`)).json();
    const third = (await cw.pub(`/content?limit=2&cursor=${encodeURIComponent(second.nextCursor)}`)).json();
    const slugs = [...first.items, ...second.items, ...third.items].map((i: { slug: string }) => i.slug);
    expect(new Set(slugs).size).toBe(5);
    expect(third.nextCursor).toBeNull();
    expect((await cw.pub('/content?cursor=forged')).statusCode).toBe(400);
  });

  it('serves one entry by slug with fields and publishing metadata, and content types', async () => {
    const entry = (await cw.pub('/content/public-0')).json();
    expect(entry).toMatchObject({ slug: 'public-0', title: 'Public 0', fields: { n: 0 }, status: 'published', locale: 'en' });
    expect(entry.publishedAt).toBeTruthy();
    expect((await cw.pub('/content/draft-only')).statusCode).toBe(404);
    expect((await cw.pub('/content/nope')).json()).toEqual({ error: expect.any(String) });
    expect((await cw.pub('/content-types')).json().types.map((t: { slug: string }) => t.slug)).toEqual(['post', 'page']);
    expect((await cw.pub('/openapi.json')).json().paths).toHaveProperty('/content/{slug}');
  });

  it('every public entry answer carries its site path by the permalink rule (list, by slug, search, GraphQL), and follows a rule change at the next read', async () => {
    const list = (await cw.pub('/content?limit=100')).json();
    for (const item of list.items) expect(item.path).toBe(`/en/${item.type}/${item.slug}`);
    expect((await cw.pub('/content/public-1')).json().path).toBe('/en/page/public-1');
    expect((await cw.pub('/search?q=public-2')).json().items[0].path).toBe('/en/post/public-2');
    expect((await cw.pub('/content/publique?locale=fr')).json().path).toBe('/fr/post/publique');
    const news = (await cw.manage('POST', '/taxonomies/category/terms', { name: 'News', termSlug: 'news' })).json();
    const tagged = await cw.create({ title: 'Placed', slug: 'placed' });
    expect((await cw.manage('PUT', `/content/${tagged.id}/terms`, { terms: { category: [news.id] } })).statusCode).toBe(200);
    await cw.manage('POST', `/content/${tagged.id}/publish`);
    const rule = { structure: '/%category%/%postname%/', categoryBase: 'topics', tagBase: 'tag', typeBases: { post: 'blog', page: '' } };
    expect((await cw.manage('PUT', '/permalinks', rule)).statusCode).toBe(200);
    try {
      expect((await cw.pub('/content/placed')).json().path).toBe('/en/blog/news/placed');
      expect((await cw.pub('/content/public-1')).json().path).toBe('/en/uncategorized/public-1');
      const viaGraphql = (await gql('{ entry(slug: "placed") { path } content(type: "page", limit: 1) { items { slug path } } }')).json().data;
      expect(viaGraphql.entry.path).toBe('/en/blog/news/placed');
      expect(viaGraphql.content.items[0].path).toBe(`/en/uncategorized/${viaGraphql.content.items[0].slug}`);
    } finally {
      expect((await cw.manage('DELETE', '/permalinks')).statusCode).toBe(200);
    }
    expect((await cw.pub('/content/placed')).json().path).toBe('/en/post/placed');
  });

  it("places a page's entries by the rule its public state holds: answers computed past the cache read no rule", async () => {
    const ruleReads: unknown[] = [];
    const listener = (event: CommandStartedEvent) => {
      const filter = (event.command as { filter?: { _id?: unknown } }).filter;
      if (event.commandName === 'find' && event.command.find === DESIGN_COLLECTION && String(filter?._id).endsWith(':permalinks:default'))
        ruleReads.push(filter?._id);
    };
    expect((await cw.pub('/content?limit=2')).statusCode).toBe(200);
    cw.world.services.mongo.on('commandStarted', listener);
    try {
      // Each a URL of its own: none is answered from the response cache.
      for (const limit of [3, 4, 5]) {
        const { items } = (await cw.pub(`/content?limit=${limit}`)).json();
        for (const item of items) expect(item.path).toBe(`/${item.locale}/${item.type}/${item.slug}`);
      }
      expect((await cw.pub('/content/public-3')).json().path).toBe('/en/page/public-3');
      expect(ruleReads).toEqual([]);
    } finally {
      cw.world.services.mongo.off('commandStarted', listener);
    }
  });

  it('shows a published entry without its snapshot (written around the write path) from its working revision, in lists and search', async () => {
    const entry = await cw.create({ title: 'Snapshotless zyxwvu', slug: 'snapshotless', excerpt: 'Kept whole' });
    await cw.manage('POST', `/content/${entry.id}/publish`);
    const entries = cw.world.services.mongo.db(cw.world.defaultWorkspace.dbName).collection<{ _id: string }>('content_entries');
    await entries.updateOne({ _id: entry.id }, { $unset: { live: '' } });
    await cw.manage('POST', '/cache/clear');
    const listed = (await cw.pub('/content?limit=100')).json().items.find((item: { id: string }) => item.id === entry.id);
    const found = (await cw.pub('/search?q=zyxwvu')).json().items;
    expect(found.map((item: { id: string }) => item.id)).toEqual([entry.id]);
    for (const item of [listed, found[0]])
      expect(item).toMatchObject({ title: 'Snapshotless zyxwvu', slug: 'snapshotless', excerpt: 'Kept whole', path: '/en/post/snapshotless' });
    await cw.manage('DELETE', `/content/${entry.id}`);
  });

  it('invalidates the cache on update, publish, unpublish and delete', async () => {
    const entry = await cw.create({ title: 'Cached', slug: 'cached' });
    await cw.manage('POST', `/content/${entry.id}/publish`);
    expect((await cw.pub('/content/cached')).json().title).toBe('Cached');
    await cw.manage('PATCH', `/content/${entry.id}`, { title: 'Cached 2', status: 'published' });
    expect((await cw.pub('/content/cached')).json().title).toBe('Cached 2');
    await cw.manage('POST', `/content/${entry.id}/unpublish`);
    expect((await cw.pub('/content/cached')).statusCode).toBe(404);
    await cw.manage('POST', `/content/${entry.id}/publish`);
    expect((await cw.pub('/content?slug=cached')).json().total).toBe(1);
    await cw.manage('DELETE', `/content/${entry.id}`);
    expect((await cw.pub('/content?slug=cached')).json().total).toBe(0);
  });

  it('a publish through one gateway reaches the cache of another within the state TTL (250 ms)', async () => {
    const other = await createRuntime(cw.world.config);
    const app2 = await other.buildApp({ logger: false });
    try {
      const entry = await cw.create({ title: 'Elsewhere', slug: 'elsewhere' });
      const read = () => app2.inject({ method: 'GET', url: '/api/v1/content/elsewhere' });
      expect((await read()).statusCode).toBe(404);
      await cw.manage('POST', `/content/${entry.id}/publish`);
      const started = Date.now();
      let status = 0;
      while (Date.now() - started < 2000 && (status = (await read()).statusCode) !== 200) await new Promise((r) => setTimeout(r, 25));
      expect(status).toBe(200);
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      await app2.close();
      await closeServices(other.services);
    }
  });

  it('preview=1 shows drafts and working revisions to a signed-in editor only', async () => {
    expect((await cw.pub('/content/draft-only?preview=1')).statusCode).toBe(404);
    const { cookie } = await signIn(cw.world);
    const preview = await cw.pub('/content/draft-only?preview=1', { cookie });
    expect(preview.json()).toMatchObject({ title: 'Draft only', preview: true });
    expect((await cw.pub('/content/draft-only', { cookie })).statusCode).toBe(404);
    const forged = await cw.pub('/content/draft-only?preview=1', { cookie: 'cwb_session=forged' });
    expect([401, 404]).toContain(forged.statusCode);
  });

  it('answers 404 on every public endpoint, GraphQL included, while the Public API is switched off', async () => {
    const off = await cw.manage('PATCH', '/settings', { api: { publicEnabled: false } });
    expect(off.statusCode).toBe(200);
    for (const url of ['/content', '/content/public-0', '/content-types', '/menus', '/menus/main', '/search?q=public']) {
      const res = await cw.pub(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toHaveProperty('error');
    }
    expect((await gql('{ contentTypes { slug } }')).statusCode).toBe(404);
    await cw.manage('PATCH', '/settings', { api: { publicEnabled: true } });
    expect((await cw.pub('/content')).statusCode).toBe(200);
  });
});

describe('GraphQL', () => {
  it('answers the same data as REST', async () => {
    const rest = (await cw.pub('/content?limit=3')).json();
    const res = await gql('query ($limit: Int) { content(limit: $limit) { items { id slug title fields blocks locale } nextCursor total locale } }', {
      limit: 3,
    });
    expect(res.statusCode).toBe(200);
    const data = res.json().data.content;
    expect(data.total).toBe(rest.total);
    expect(data.locale).toBe(rest.locale);
    expect(data.items).toEqual(
      rest.items.map((i: Record<string, unknown>) => ({ id: i.id, slug: i.slug, title: i.title, fields: i.fields, blocks: i.blocks, locale: i.locale })),
    );
    // Same cursor format: a REST cursor continues a GraphQL list.
    const next = (await cw.pub(`/content?limit=3&cursor=${encodeURIComponent(data.nextCursor)}`)).json();
    const all = (await cw.pub('/content?limit=100')).json().total;
    expect(next.items).toHaveLength(Math.min(3, all - 3));
    expect(next.items.map((i: { id: string }) => i.id)).not.toContain(data.items[0].id);

    const fr = (await gql('{ content(locale: "fr") { items { slug } locale } }')).json().data.content;
    expect(fr).toEqual({ items: [{ slug: 'publique' }], locale: 'fr' });
    const one = (await gql('{ entry(slug: "public-1") { title fields } missing: entry(slug: "draft-only") { title } }')).json().data;
    expect(one).toEqual({ entry: { title: 'Public 1', fields: { n: 1 } }, missing: null });
    const types = (await gql('{ contentTypes { slug builtin } }')).json().data.contentTypes;
    expect(types).toEqual((await cw.pub('/content-types')).json().types.map((t: { slug: string; builtin: boolean }) => ({ slug: t.slug, builtin: t.builtin })));
    const menus = (await gql('{ menus { menus { slug items { label url } } locale } menu(slug: "main") { menu { name } } }')).json().data;
    expect(menus.menus).toEqual({ menus: [{ slug: 'main', items: [{ label: 'Home', url: '/' }] }], locale: 'en' });
    expect(menus.menu.menu.name).toBe('Main');
    const search = (await gql('{ search(q: "PUBLIC 3") { items { slug } total } }')).json().data.search;
    expect(search).toEqual({ items: [{ slug: 'public-3' }], total: 1 });
  });

  it('rejects queries that are too deep or too costly, and bad input', async () => {
    const deep = await gql('{ menus { menus { items { children { children { children { children { children { children { label } } } } } } } } } }');
    expect(deep.json().errors?.[0]?.message).toMatch(/depth/i);
    const aliases = Array.from({ length: 30 }, (_, i) => `a${i}: content(limit: 100) { items { id title slug } }`).join(' ');
    const costly = await gql(`{ ${aliases} }`);
    expect(costly.statusCode).toBe(400);
    expect(costly.json().errors[0].message).toContain(`> ${MAX_QUERY_COST}`);
    const bad = await gql('{ content(limit: 500) { total } }');
    expect(bad.json().errors[0].message).toMatch(/limit/);
    const preview = await gql('{ entry(slug: "draft-only", preview: true) { title } }');
    expect(preview.json().data.entry).toBeNull();
    const { cookie } = await signIn(cw.world);
    const editor = await gql('{ entry(slug: "draft-only", preview: true) { title preview } }', undefined, { cookie });
    expect(editor.json().data.entry).toEqual({ title: 'Draft only', preview: true });
  });
});

describe('public search rate limit', () => {
  it('allows 60 searches per minute per IP, then 429 with Retry-After', async () => {
    const ip = '198.51.100.7';
    const search = () => cw.world.app.inject({ method: 'GET', url: '/api/v1/search?q=public', remoteAddress: ip });
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await search()).statusCode);
    expect(statuses.every((s) => s === 200)).toBe(true);
    const over = await search();
    expect(over.statusCode).toBe(429);
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    expect(over.json()).toHaveProperty('error');
    // Another IP and other public reads are not affected.
    expect((await cw.world.app.inject({ method: 'GET', url: '/api/v1/search?q=public', remoteAddress: '198.51.100.8' })).statusCode).toBe(200);
    expect((await cw.world.app.inject({ method: 'GET', url: '/api/v1/content', remoteAddress: ip })).statusCode).toBe(200);
  });
});

describe('GraphQL spends the same budgets as REST', () => {
  it('counts every operation a query runs: 65 aliased searches from one address go past the 60 searches a minute', async () => {
    await freshWindow(20);
    const ip = '198.51.100.9';
    const aliases = Array.from({ length: 65 }, (_, i) => `s${i}: search(q: "public", limit: 1) { total }`).join(' ');
    const res = await cw.world.app.inject({ method: 'POST', url: '/api/v1/graphql', payload: { query: `{ ${aliases} }` }, remoteAddress: ip });
    // `search` is non-null, so the first refusal nulls the answer (GraphQL reports that one).
    const body = res.json();
    expect(body.data).toBeNull();
    expect(body.errors.length).toBeGreaterThan(0);
    for (const error of body.errors) expect(error.message).toBe('Too many requests');
    // The query spent the address's whole search budget: REST is refused too.
    const rest = await cw.world.app.inject({ method: 'GET', url: '/api/v1/search?q=public', remoteAddress: ip });
    expect(rest.statusCode).toBe(429);
  });

  it('two operations in one query are two hits', async () => {
    await freshWindow(20);
    const ip = '198.51.100.10';
    const res = await cw.world.app.inject({
      method: 'POST',
      url: '/api/v1/graphql',
      payload: { query: '{ a: search(q: "public", limit: 1) { total } b: search(q: "public 2", limit: 1) { total } }' },
      remoteAddress: ip,
    });
    expect(res.json().errors).toBeUndefined();
    const rest = await cw.world.app.inject({ method: 'GET', url: '/api/v1/search?q=public', remoteAddress: ip });
    expect(rest.statusCode).toBe(200);
    expect(rest.headers.ratelimit).toMatch(/"op";r=57;/);
  });
});
