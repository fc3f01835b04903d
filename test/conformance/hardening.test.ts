import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSiteWorld, type SiteWorld } from '../site-config/support.ts';
import { MAX_PATH_PARAM_LENGTH } from '../../services/core/statuses.ts';

/** Regression tests of issue 10, one per defect the fuzz run found, named for what they pin. */
let sw: SiteWorld;
beforeAll(async () => {
  sw = await startSiteWorld();
});
afterAll(() => sw?.close());

const blocks = { version: 1, blocks: [] };
const get = async (url: string) => {
  const res = await sw.manage('GET', url);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
/** A bad write answers `status` with `{ error }` mentioning `field`, and leaves what `readUrl` shows unchanged. */
async function refused(method: string, url: string, body: unknown, readUrl: string, field: string, status = 400) {
  const before = await get(readUrl);
  const res = await sw.manage(method, url, body);
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.json().error).toContain(field);
  expect(await get(readUrl)).toEqual(before);
}

describe('unsafe object keys', () => {
  it('refuses a NUL byte in any key with a 400 naming the field, and stores nothing', async () => {
    await refused(
      'PUT',
      '/patterns',
      { items: [{ slug: 'p', title: 'P', blocks: { version: 1, blocks: [{ type: 'x', 'a\u0000b': 1 }] } }] },
      '/patterns',
      'items.0.blocks.blocks.0',
    );
    await refused(
      'PUT',
      '/reusable-blocks',
      { items: [{ slug: 'r', title: 'R', blocks: { version: 1, blocks: [{ 'k\u0000': {} }] } }] },
      '/reusable-blocks',
      'NUL',
    );
    await refused('POST', '/widgets', { type: 'html', settings: { 'x\u0000y': 'z' } }, '/widgets/areas', 'settings');
    await refused('PUT', '/template-parts/footer-nul', { area: 'footer', title: 'F', blocks: { version: 1, blocks: [{ '\u0000': 1 }] } }, '/headers', 'NUL');
    expect((await sw.manage('GET', '/template-parts/footer-nul')).statusCode).toBe(404);
  });

  it('never lets a $-key or a dotted key of a free-form object reach the database as an operator or a path', async () => {
    const created = await sw.manage('POST', '/content', { title: 'Safe', type: 'post', fields: { plain: 1 } });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    for (const fields of [{ $set: { title: 'owned' } }, { 'title.x': 1 }, { nested: { $gt: '' } }, { nested: { 'a.b': 1 } }]) {
      await refused('PATCH', `/content/${id}`, { fields }, `/content/${id}`, 'fields');
    }
    await refused('PATCH', '/settings', { $rename: { title: 'x' } }, '/settings', '$');
    await refused('POST', '/widgets', { type: 'html', settings: { 'a.b': 1 } }, '/widgets/areas', 'settings');
    await refused('POST', '/menus', { slug: 'm', name: 'M', layout: { $where: '1' } }, '/menus', 'layout');
    await refused('PUT', '/patterns', { items: [{ slug: 'q', title: 'Q', blocks: { version: 1, blocks: [{ $inc: { n: 1 } }] } }] }, '/patterns', '$');
    expect((await get(`/content/${id}`)).fields).toEqual({ plain: 1 });
  });
});

describe('framework errors answer { error } with a declared status', () => {
  it('answers 400 to multipart/form-data without a boundary on POST /media, and stores nothing', async () => {
    const before = await get('/media');
    const res = await sw.world.app.inject({
      method: 'POST',
      url: '/api/manage/v1/media',
      headers: { authorization: `Bearer ${sw.key}`, 'content-type': 'multipart/form-data' },
      payload: 'x',
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toContain('file');
    expect(await get('/media')).toEqual(before);
  });

  it('answers 414 { error } to a path parameter longer than the documented maxLength, 400 to a malformed JSON body', async () => {
    const long = await sw.manage('GET', `/content/${'a'.repeat(MAX_PATH_PARAM_LENGTH + 1)}`);
    expect(long.statusCode).toBe(414);
    expect(long.json()).toEqual({ error: expect.stringContaining(String(MAX_PATH_PARAM_LENGTH)) });
    expect((await sw.manage('GET', `/content/${'a'.repeat(MAX_PATH_PARAM_LENGTH)}`)).statusCode).toBe(404);
    const bad = await sw.world.app.inject({
      method: 'POST',
      url: '/api/manage/v1/menus',
      headers: { authorization: `Bearer ${sw.key}`, 'content-type': 'application/json' },
      payload: '{"slug":',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ error: 'Malformed JSON body' });
    const type = await sw.world.app.inject({
      method: 'POST',
      url: '/api/manage/v1/menus',
      headers: { authorization: `Bearer ${sw.key}`, 'content-type': 'text/csv' },
      payload: 'a,b',
    });
    expect(type.statusCode).toBe(415);
    expect(typeof type.json().error).toBe('string');
  });

  it('declares 409, 413, 414, 415 and maxLength in the document of the operations that can answer them', async () => {
    const doc = (await sw.world.app.inject({ method: 'GET', url: '/api/manage/v1/openapi.json' })).json();
    const codes = (path: string, method: string) => Object.keys(doc.paths[path][method].responses);
    expect(codes('/content', 'post')).toEqual(expect.arrayContaining(['201', '400', '401', '403', '404', '409', '413', '415', '429']));
    expect(codes('/content/{id}/publish', 'post')).toContain('409');
    expect(codes('/roles/{id}', 'get')).toContain('414');
    expect(codes('/roles', 'get')).not.toContain('414');
    expect(doc.paths['/content/{id}'].get.parameters[0].schema.maxLength).toBe(MAX_PATH_PARAM_LENGTH);
    // A parameter with a tighter limit of its own documents that one (and answers 400 beyond it).
    expect(doc.paths['/roles/{id}'].get.parameters[0].schema.maxLength).toBeLessThan(MAX_PATH_PARAM_LENGTH);
    const conflict = await sw.manage('POST', '/languages', { code: 'en', name: 'English' });
    expect(conflict.statusCode).toBe(409);
    expect(codes('/languages', 'post')).toContain('409');
    const pub = (await sw.world.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(Object.keys(pub.paths['/search'].get.responses)).toContain('429');
  });
});

describe('Management lists page', () => {
  it('pages every configuration list with limit and page.nextCursor, each item once', async () => {
    expect((await sw.manage('POST', '/languages', { code: 'fr', name: 'French' })).statusCode).toBe(201);
    expect((await sw.manage('POST', '/menus', { slug: 'one', name: 'One' })).statusCode).toBe(201);
    expect((await sw.manage('POST', '/menus', { slug: 'two', name: 'Two' })).statusCode).toBe(201);
    expect((await sw.manage('POST', '/taxonomies', { slug: 'topics', label: 'Topics' })).statusCode).toBe(201);
    expect((await sw.manage('PUT', '/template-parts/header-two', { area: 'header', title: 'Two', blocks })).statusCode).toBe(200);
    for (const list of ['/menus', '/content-types', '/languages', '/taxonomies', '/roles', '/templates', '/headers', '/email-templates']) {
      const whole = await get(`${list}?limit=200`);
      expect(whole.page, list).toMatchObject({ limit: 200, nextCursor: null });
      expect(whole.data.length, list).toBeGreaterThan(1);
      const seen: unknown[] = [];
      let cursor: string | null = null;
      do {
        const page = await get(`${list}?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(page.data.length, list).toBe(1);
        seen.push(...page.data);
        cursor = page.page.nextCursor;
      } while (cursor);
      expect(seen, list).toEqual(whole.data);
    }
    const other = (await get('/menus?limit=1')).page.nextCursor;
    expect((await sw.manage('GET', `/roles?cursor=${encodeURIComponent(other)}`)).statusCode).toBe(400);
  });
});

describe('DELETE /widgets/layout', () => {
  it('clears the widget layout', async () => {
    expect((await sw.manage('POST', '/widgets/areas', { key: 'side', name: 'Side' })).statusCode).toBe(201);
    expect((await sw.manage('PUT', '/widgets/layout', { layout: { post: ['side'] } })).statusCode).toBe(200);
    const res = await sw.manage('DELETE', '/widgets/layout');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ layout: {} });
    expect(await get('/widgets/layout')).toEqual({ layout: {} });
  });
});
