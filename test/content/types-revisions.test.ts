import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContentWorld, type ContentWorld } from './support.ts';
import { contentCollections } from '../../services/content/model.ts';
import { revisionOf } from '../../services/content/entries.ts';

let cw: ContentWorld;
beforeAll(async () => {
  cw = await startContentWorld();
});
afterAll(async () => cw?.close());

describe('content types', () => {
  it('lists the built-ins and manages custom types with field schemas', async () => {
    const list = (await cw.manage('GET', '/content-types')).json().data;
    expect(list.map((t: { slug: string }) => t.slug)).toEqual(['post', 'page']);
    const created = await cw.manage('POST', '/content-types', {
      slug: 'product',
      label: 'Products',
      fields: [
        { name: 'price', kind: 'number', required: true, min: 0 },
        { name: 'color', kind: 'select', options: ['red', 'blue'] },
        { name: 'homepage', kind: 'url' },
      ],
    });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ slug: 'product', builtin: false, description: '' });
    expect((await cw.manage('POST', '/content-types', { slug: 'product', label: 'Again' })).statusCode).toBe(409);
    expect((await cw.manage('POST', '/content-types', { slug: 'post', label: 'Clash' })).statusCode).toBe(409);
    expect((await cw.manage('POST', '/content-types', { slug: 'Bad Slug', label: 'x' })).statusCode).toBe(400);
    expect(
      (
        await cw.manage('POST', '/content-types', {
          slug: 'dup',
          label: 'x',
          fields: [
            { name: 'a', kind: 'string' },
            { name: 'a', kind: 'number' },
          ],
        })
      ).statusCode,
    ).toBe(400);
    expect((await cw.manage('PATCH', '/content-types/post', { label: 'Nope' })).statusCode).toBe(400);
    expect((await cw.manage('DELETE', '/content-types/page')).statusCode).toBe(400);
    expect((await cw.manage('GET', '/content-types/product')).json().fields).toHaveLength(3);
    const pub = (await cw.pub('/content-types')).json();
    expect(pub.types.map((t: { slug: string }) => t.slug)).toEqual(['post', 'page', 'product']);
    expect(pub.types[2]).toEqual(expect.objectContaining({ slug: 'product', label: 'Products', description: '', builtin: false, fields: expect.any(Array) }));
  });

  it('validates custom field values on every write: 400 naming the field, nothing written', async () => {
    const before = (await cw.manage('GET', '/content?type=product')).json().data.length;
    const bad: Array<[Record<string, unknown>, string]> = [
      [{}, 'fields.price'],
      [{ price: 'cheap' }, 'fields.price'],
      [{ price: -1 }, 'fields.price'],
      [{ price: 3, color: 'green' }, 'fields.color'],
      [{ price: 3, homepage: 'not a url' }, 'fields.homepage'],
    ];
    for (const [fields, name] of bad) {
      const res = await cw.manage('POST', '/content', { title: 'Widget', type: 'product', fields });
      expect(res.statusCode, JSON.stringify(fields)).toBe(400);
      expect(res.json().error).toContain(name);
    }
    expect((await cw.manage('GET', '/content?type=product')).json().data.length).toBe(before);

    const ok = await cw.create({ title: 'Widget', type: 'product', fields: { price: 3, color: 'red', extra: { any: true } } });
    const patch = await cw.manage('PATCH', `/content/${ok.id}`, { fields: { price: 'free' } });
    expect(patch.statusCode).toBe(400);
    expect(patch.json().error).toContain('fields.price');
    expect((await cw.manage('PATCH', `/content/${ok.id}`, { fields: { price: null } })).statusCode).toBe(400);
    const stored = (await cw.manage('GET', `/content/${ok.id}`)).json();
    expect(stored).toMatchObject({ version: 1, fields: { price: 3, color: 'red', extra: { any: true } } });
    const good = await cw.manage('PATCH', `/content/${ok.id}`, { fields: { price: 4, color: null } });
    expect(good.json().fields).toEqual({ price: 4, extra: { any: true } });

    // A type in use cannot be deleted; an unused one can.
    expect((await cw.manage('DELETE', '/content-types/product')).statusCode).toBe(409);
    await cw.manage('POST', '/content-types', { slug: 'temp', label: 'Temp' });
    expect((await cw.manage('DELETE', '/content-types/temp')).statusCode).toBe(200);
    expect((await cw.manage('GET', '/content-types/temp')).statusCode).toBe(404);
  });
});

describe('revisions', () => {
  it('keeps one revision per saved version, listed newest first, one with its block body', async () => {
    const blocks = { version: 1, blocks: [{ type: 'paragraph', text: 'one' }] };
    const entry = await cw.create({ title: 'Rev 1', blocks });
    await cw.manage('PATCH', `/content/${entry.id}`, { title: 'Rev 2', blocks: { version: 1, blocks: [{ type: 'paragraph', text: 'two' }, [1, [2]]] } });
    await cw.manage('POST', `/content/${entry.id}/publish`);
    const list = (await cw.manage('GET', `/content/${entry.id}/revisions`)).json();
    expect(list.data.map((r: { version: number; title: string; status: string }) => [r.version, r.title, r.status])).toEqual([
      [3, 'Rev 2', 'published'],
      [2, 'Rev 2', 'draft'],
      [1, 'Rev 1', 'draft'],
    ]);
    expect(list.data[0]).not.toHaveProperty('blocks');
    const first = (await cw.manage('GET', `/content/${entry.id}/revisions/1`)).json();
    expect(first).toMatchObject({ id: '1', version: 1, title: 'Rev 1', blocks });
    const second = (await cw.manage('GET', `/content/${entry.id}/revisions/2`)).json();
    expect(second.blocks.blocks[1]).toEqual([1, [2]]);
    expect((await cw.manage('GET', `/content/${entry.id}/revisions/99`)).statusCode).toBe(404);
    expect((await cw.manage('GET', `/content/nope/revisions`)).statusCode).toBe(404);
    const paged = (await cw.manage('GET', `/content/${entry.id}/revisions?limit=2`)).json();
    expect(paged.data).toHaveLength(2);
    const rest = (await cw.manage('GET', `/content/${entry.id}/revisions?limit=2&cursor=${encodeURIComponent(paged.page.nextCursor)}`)).json();
    expect(rest.data.map((r: { version: number }) => r.version)).toEqual([1]);
  });

  it("answers an entry's current state as its newest revision: a create writes no row, a change writes the state it left", async () => {
    const db = cw.world.services.workspaceDb(cw.world.defaultWorkspace);
    const rows = (id: string) => contentCollections(db).revisions.find({ entryId: id }).sort({ version: 1 }).toArray();
    const entry = await cw.create({ title: 'Own 1' });
    expect(await rows(entry.id)).toEqual([]);
    const [only] = (await cw.manage('GET', `/content/${entry.id}/revisions`)).json().data;
    expect(only).toMatchObject({ version: 1, title: 'Own 1', status: 'draft', note: null });
    expect((await cw.manage('GET', `/content/${entry.id}/revisions/1`)).json()).toMatchObject({ version: 1, title: 'Own 1' });
    await cw.manage('PATCH', `/content/${entry.id}`, { title: 'Own 2' });
    // The state left is a row, by the same author and at the time it was written.
    expect((await rows(entry.id)).map((row) => [row.version, row.title, row.authorId, row.createdAt.toISOString()])).toEqual([
      [1, 'Own 1', only.author, only.createdAt],
    ]);
    // An entry written before its current state became its own revision has a row of it: listed once.
    const legacy = await cw.create({ title: 'Legacy' });
    const stored = (await contentCollections(db).entries.findOne({ _id: legacy.id }))!;
    await contentCollections(db).revisions.insertOne({ ...revisionOf(stored), authorId: 'someone' });
    const listed = (await cw.manage('GET', `/content/${legacy.id}/revisions`)).json().data;
    expect(listed.map((r: { version: number; author: string }) => [r.version, r.author])).toEqual([[1, 'someone']]);
  });

  it('sets the header reference', async () => {
    const entry = await cw.create({ title: 'Header' });
    expect(entry.headerRef).toEqual({ mode: 'default' });
    const named = await cw.manage('PUT', `/content/${entry.id}/header-ref`, { headerRef: { mode: 'library', name: 'hero' } });
    expect(named.json()).toMatchObject({ headerRef: { mode: 'library', name: 'hero' }, version: 2 });
    const bad = await cw.manage('PUT', `/content/${entry.id}/header-ref`, { headerRef: { mode: 'library' } });
    expect(bad.statusCode).toBe(400);
    expect((await cw.manage('PUT', `/content/${entry.id}/header-ref`, { headerRef: { mode: 'none' } })).json().headerRef).toEqual({ mode: 'none' });
  });
});
