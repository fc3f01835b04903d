import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContentWorld, signIn, type ContentWorld } from './support.ts';

let cw: ContentWorld;
beforeAll(async () => {
  cw = await startContentWorld();
});
afterAll(async () => cw?.close());

const count = async () => (await cw.manage('GET', '/content?limit=200')).json().data.length;

describe('entry lifecycle', () => {
  it('creates a draft (201) with defaults, a derived slug and the site default locale', async () => {
    const res = await cw.manage('POST', '/content', { title: 'Hello World' });
    expect(res.statusCode).toBe(201);
    const entry = res.json();
    expect(entry).toMatchObject({
      type: 'post',
      title: 'Hello World',
      slug: 'hello-world',
      locale: 'en',
      status: 'draft',
      version: 1,
      excerpt: null,
      publishedAt: null,
    });
    expect(entry.blocks).toEqual({ version: 1, blocks: [] });
    expect(cw.events.some((e) => e.event === 'content.created' && e.data.id === entry.id)).toBe(true);
    const again = await cw.create({ title: 'Hello World' });
    expect(again.slug).toBe('hello-world-2');
  });

  it('refuses bad input with 400 { error } and writes nothing', async () => {
    const before = await count();
    const cases: Array<[unknown, RegExp]> = [
      [{ title: '' }, /title/],
      [{}, /title/],
      [{ title: 'x', type: 'nope' }, /type/],
      [{ title: 'x', blocks: { version: 2, blocks: [] } }, /blocks/],
      [{ title: 'x', blocks: { version: 1, blocks: 'no' } }, /blocks/],
      [{ title: 'x', locale: 'xx' }, /locale/],
      [{ title: 'x', slug: 'Not A Slug!' }, /slug/],
    ];
    for (const [body, message] of cases) {
      const res = await cw.manage('POST', '/content', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error).toMatch(message);
    }
    expect(await count()).toBe(before);
  });

  it('answers 409 on a duplicate slug, leaving the first entry as it was', async () => {
    const first = await cw.create({ title: 'Unique', slug: 'unique-slug' });
    const res = await cw.manage('POST', '/content', { title: 'Other', slug: 'unique-slug' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toHaveProperty('error');
    const got = (await cw.manage('GET', `/content/${first.id}`)).json();
    expect(got).toMatchObject({ title: 'Unique', version: 1 });
  });

  it('gets with an ETag and answers 304 to If-None-Match; 404 for unknown ids', async () => {
    const entry = await cw.create({ title: 'Etag me' });
    const res = await cw.manage('GET', `/content/${entry.id}`);
    expect(res.statusCode).toBe(200);
    const etag = res.headers.etag as string;
    expect(etag).toBeTruthy();
    const again = await cw.manage('GET', `/content/${entry.id}`, undefined, cw.key, { 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    const missing = await cw.manage('GET', '/content/nope');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ error: expect.any(String) });
  });

  it('patches, checks expectedVersion (409, nothing changed) and changes status', async () => {
    const entry = await cw.create({ title: 'Patch me' });
    const ok = await cw.manage('PATCH', `/content/${entry.id}`, { title: 'Patched', excerpt: 'short', expectedVersion: 1 });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ title: 'Patched', excerpt: 'short', version: 2 });
    const stale = await cw.manage('PATCH', `/content/${entry.id}`, { title: 'Lost', expectedVersion: 1 });
    expect(stale.statusCode).toBe(409);
    expect(stale.json()).toHaveProperty('error');
    expect((await cw.manage('GET', `/content/${entry.id}`)).json()).toMatchObject({ title: 'Patched', version: 2 });
    const bad = await cw.manage('PATCH', `/content/${entry.id}`, { status: 'gone' });
    expect(bad.statusCode).toBe(400);
    const archived = await cw.manage('PATCH', `/content/${entry.id}`, { status: 'archived' });
    expect(archived.json()).toMatchObject({ status: 'archived', version: 3 });
    const missing = await cw.manage('PATCH', '/content/nope', { title: 'x' });
    expect(missing.statusCode).toBe(404);
  });

  it('publishes (public sees the snapshot), keeps edits as a working revision, previews them for editors only, unpublishes', async () => {
    const entry = await cw.create({ title: 'Launch', slug: 'launch', fields: { a: 1 } });
    expect((await cw.pub('/content/launch')).statusCode).toBe(404);
    const stalePublish = await cw.manage('POST', `/content/${entry.id}/publish`, { expectedVersion: 7 });
    expect(stalePublish.statusCode).toBe(409);
    const published = await cw.manage('POST', `/content/${entry.id}/publish`, { expectedVersion: 1 });
    expect(published.statusCode).toBe(200);
    expect(published.json()).toMatchObject({ status: 'published', version: 2 });
    expect(published.json().publishedAt).toBeTruthy();
    expect(cw.events.some((e) => e.event === 'content.published' && e.data.id === entry.id)).toBe(true);

    const live = await cw.pub('/content/launch');
    expect(live.statusCode).toBe(200);
    expect(live.json()).toMatchObject({ title: 'Launch', slug: 'launch', fields: { a: 1 }, locale: 'en' });
    expect(live.headers.etag).toBeTruthy();
    expect((await cw.pub('/content/launch', { 'if-none-match': live.headers.etag as string })).statusCode).toBe(304);

    await cw.manage('PATCH', `/content/${entry.id}`, { title: 'Launch v2' });
    expect((await cw.pub('/content/launch')).json().title).toBe('Launch');
    // Anonymous preview is ignored; a signed-in editor sees the working revision.
    expect((await cw.pub('/content/launch?preview=1')).json().title).toBe('Launch');
    const { cookie } = await signIn(cw.world);
    const preview = await cw.pub('/content/launch?preview=1', { cookie });
    expect(preview.statusCode).toBe(200);
    expect(preview.json()).toMatchObject({ title: 'Launch v2', preview: true });

    await cw.manage('POST', `/content/${entry.id}/publish`);
    expect((await cw.pub('/content/launch')).json().title).toBe('Launch v2');

    const unpublished = await cw.manage('POST', `/content/${entry.id}/unpublish`);
    expect(unpublished.json()).toMatchObject({ status: 'draft', publishedAt: null });
    expect(cw.events.some((e) => e.event === 'content.unpublished' && e.data.id === entry.id)).toBe(true);
    expect((await cw.pub('/content/launch')).statusCode).toBe(404);
  });

  it('PATCH status published publishes and status draft unpublishes', async () => {
    const entry = await cw.create({ title: 'Via patch', slug: 'via-patch' });
    await cw.manage('PATCH', `/content/${entry.id}`, { status: 'published', title: 'Via patch!' });
    expect((await cw.pub('/content/via-patch')).json().title).toBe('Via patch!');
    await cw.manage('PATCH', `/content/${entry.id}`, { status: 'draft' });
    expect((await cw.pub('/content/via-patch')).statusCode).toBe(404);
  });

  it('trash round trip: delete, list, restore as draft, delete again, purge', async () => {
    const entry = await cw.create({ title: 'Trash me', slug: 'trash-me' });
    await cw.manage('POST', `/content/${entry.id}/publish`);
    const del = await cw.manage('DELETE', `/content/${entry.id}`);
    expect(del.statusCode).toBe(200);
    expect(cw.events.some((e) => e.event === 'content.deleted' && e.data.id === entry.id)).toBe(true);
    expect((await cw.manage('GET', `/content/${entry.id}`)).statusCode).toBe(404);
    expect((await cw.manage('DELETE', `/content/${entry.id}`)).statusCode).toBe(404);
    expect((await cw.pub('/content/trash-me')).statusCode).toBe(404);

    const trash = (await cw.manage('GET', '/trash')).json();
    expect(trash.data).toContainEqual(expect.objectContaining({ kind: 'entry', id: entry.id, title: 'Trash me' }));

    expect((await cw.manage('POST', '/trash/restore', { kind: 'entry', id: 'nope' })).statusCode).toBe(404);
    expect((await cw.manage('POST', '/trash/restore', { kind: 'bogus', id: entry.id })).statusCode).toBe(400);
    const restore = await cw.manage('POST', '/trash/restore', { kind: 'entry', id: entry.id });
    expect(restore.statusCode).toBe(200);
    expect((await cw.manage('GET', `/content/${entry.id}`)).json()).toMatchObject({ status: 'draft' });

    await cw.manage('DELETE', `/content/${entry.id}`);
    const purge = await cw.manage('DELETE', `/trash?kind=entry&id=${entry.id}`);
    expect(purge.statusCode).toBe(200);
    expect(purge.json()).toEqual({ purged: 1 });
    expect((await cw.manage('POST', '/trash/restore', { kind: 'entry', id: entry.id })).statusCode).toBe(404);
    // The slug is free again.
    expect((await cw.manage('POST', '/content', { title: 'New', slug: 'trash-me' })).statusCode).toBe(201);
  });

  it('purges the whole trash', async () => {
    const a = await cw.create({ title: 'Purge A' });
    const b = await cw.create({ title: 'Purge B' });
    await cw.manage('DELETE', `/content/${a.id}`);
    await cw.manage('DELETE', `/content/${b.id}`);
    const purge = await cw.manage('DELETE', '/trash');
    expect(purge.json().purged).toBeGreaterThanOrEqual(2);
    expect((await cw.manage('GET', '/trash')).json().data).toEqual([]);
  });
});
