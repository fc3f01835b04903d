import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContentWorld, type ContentWorld } from './support.ts';

let cw: ContentWorld;
beforeAll(async () => {
  cw = await startContentWorld();
});
afterAll(async () => cw?.close());

describe('taxonomies and terms', () => {
  it('has categories and tags, and custom taxonomies with the types using them', async () => {
    const list = (await cw.manage('GET', '/taxonomies')).json().data;
    expect(list.map((t: { slug: string }) => t.slug)).toEqual(['category', 'tag']);
    expect(list[0]).toMatchObject({ hierarchical: true, types: ['post'], builtin: true });
    const genre = await cw.manage('POST', '/taxonomies', { slug: 'genre', label: 'Genres', types: ['page'] });
    expect(genre.statusCode).toBe(201);
    expect((await cw.manage('POST', '/taxonomies', { slug: 'genre', label: 'Again' })).statusCode).toBe(409);
    expect((await cw.manage('PATCH', '/taxonomies/genre', { types: ['page', 'post'] })).json().types).toEqual(['page', 'post']);
    expect((await cw.manage('DELETE', '/taxonomies/tag')).statusCode).toBe(400);
  });

  it('adds, renames, re-slugs, nests and deletes terms; entries keep terms of taxonomies left out', async () => {
    const term = async (tax: string, body: Record<string, unknown>) => {
      const res = await cw.manage('POST', `/taxonomies/${tax}/terms`, body);
      expect(res.statusCode, res.body).toBe(201);
      return res.json();
    };
    const news = await term('category', { name: 'News' });
    expect(news).toMatchObject({ name: 'News', slug: 'news', parentId: null, taxonomy: 'category' });
    const local = await term('category', { name: 'Local', parentId: news.id });
    const js = await term('tag', { name: 'JavaScript', termSlug: 'js' });
    const rock = await term('genre', { name: 'Rock' });
    expect((await cw.manage('POST', '/taxonomies/category/terms', { name: 'News' })).statusCode).toBe(409);
    expect((await cw.manage('POST', '/taxonomies/tag/terms', { name: 'Child', parentId: js.id })).statusCode).toBe(400);
    expect((await cw.manage('POST', '/taxonomies/category/terms', { name: 'Orphan', parentId: 'nope' })).statusCode).toBe(400);
    // No cycles.
    expect((await cw.manage('PATCH', `/taxonomies/category/terms/${news.id}`, { parentId: local.id })).statusCode).toBe(400);
    const renamed = await cw.manage('PATCH', `/taxonomies/category/terms/${news.id}`, { name: 'World News', termSlug: 'world-news' });
    expect(renamed.json()).toMatchObject({ name: 'World News', slug: 'world-news' });

    const post = await cw.create({ title: 'Tagged post' });
    const put = await cw.manage('PUT', `/content/${post.id}/terms`, { terms: { category: [local.id], tag: [js.id] } });
    expect(put.statusCode).toBe(200);
    expect(put.json().terms).toEqual({ category: [local.id], tag: [js.id] });
    // Taxonomies left out keep their terms.
    await cw.manage('PUT', `/content/${post.id}/terms`, { terms: { genre: [rock.id] } });
    const terms = (await cw.manage('GET', `/content/${post.id}/terms`)).json().terms;
    expect(terms.category.map((t: { name: string }) => t.name)).toEqual(['Local']);
    expect(terms.tag.map((t: { slug: string }) => t.slug)).toEqual(['js']);
    expect(terms.genre.map((t: { id: string }) => t.id)).toEqual([rock.id]);

    const version = (await cw.manage('GET', `/content/${post.id}`)).json().version;
    expect((await cw.manage('PUT', `/content/${post.id}/terms`, { terms: { tag: ['nope'] } })).statusCode).toBe(400);
    expect((await cw.manage('PUT', `/content/${post.id}/terms`, { terms: { nope: [] } })).statusCode).toBe(400);
    expect((await cw.manage('PUT', `/content/${post.id}/terms`, { terms: { tag: [rock.id] } })).statusCode).toBe(400);
    const page = await cw.create({ title: 'A page', type: 'page' });
    expect((await cw.manage('PUT', `/content/${page.id}/terms`, { terms: { tag: [js.id] } })).statusCode).toBe(400);
    expect((await cw.manage('GET', `/content/${post.id}`)).json().version).toBe(version);

    // Deleting a term: its children move up, entries lose it.
    const del = await cw.manage('DELETE', `/taxonomies/category/terms/${news.id}`);
    expect(del.statusCode).toBe(200);
    expect((await cw.manage('GET', `/taxonomies/category/terms/${local.id}`)).json().parentId).toBeNull();
    await cw.manage('DELETE', `/taxonomies/tag/terms/${js.id}`);
    expect((await cw.manage('GET', `/content/${post.id}`)).json().terms.tag).toEqual([]);
    const all = (await cw.manage('GET', '/taxonomies/category/terms')).json();
    expect(all.data.map((t: { name: string }) => t.name)).toEqual(['Local']);
    // Deleting a custom taxonomy removes its assignments.
    await cw.manage('DELETE', '/taxonomies/genre');
    expect((await cw.manage('GET', `/content/${post.id}`)).json().terms.genre).toBeUndefined();
  });
});

describe('menus', () => {
  it('creates, resolves, replaces and trashes menus; the public sees published targets only', async () => {
    const about = await cw.create({ title: 'About us', slug: 'about', type: 'page' });
    const draft = await cw.create({ title: 'Secret', slug: 'secret', type: 'page' });
    await cw.manage('POST', `/content/${about.id}/publish`);
    const created = await cw.manage('POST', '/menus', {
      slug: 'main',
      name: 'Main',
      location: 'primary',
      items: [
        { entryId: about.id, children: [{ label: 'Docs', url: 'https://example.test/docs' }] },
        { label: 'Secret', entryId: draft.id },
      ],
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().items[0]).toMatchObject({ label: 'About us', url: '/about', entry: { id: about.id, slug: 'about', type: 'page' } });
    expect((await cw.manage('POST', '/menus', { slug: 'main', name: 'Again' })).statusCode).toBe(409);
    expect((await cw.manage('POST', '/menus', { slug: 'bad', name: 'Bad', items: [{ label: 'no target' }] })).statusCode).toBe(400);
    expect((await cw.manage('GET', '/menus/bad')).statusCode).toBe(404);

    const manage = (await cw.manage('GET', '/menus/main')).json();
    expect(manage.items).toHaveLength(2);
    const pub = await cw.pub('/menus/main');
    expect(pub.statusCode).toBe(200);
    expect(pub.json().locale).toBe('en');
    expect(pub.json().menu.items.map((i: { label: string }) => i.label)).toEqual(['About us']);
    expect(pub.json().menu.items[0].children[0]).toMatchObject({ label: 'Docs', url: 'https://example.test/docs' });
    expect((await cw.pub('/menus')).json()).toMatchObject({ locale: 'en', menus: [expect.objectContaining({ slug: 'main' })] });

    // Publishing the draft shows it on the next public read (cache invalidated).
    await cw.manage('POST', `/content/${draft.id}/publish`);
    expect((await cw.pub('/menus/main')).json().menu.items).toHaveLength(2);

    const replaced = await cw.manage('PUT', '/menus/main', { name: 'Main menu', items: [{ label: 'Home', url: '/' }] });
    expect(replaced.json()).toMatchObject({ name: 'Main menu', items: [{ label: 'Home', url: '/' }] });
    expect((await cw.pub('/menus/main')).json().menu.name).toBe('Main menu');

    expect((await cw.manage('DELETE', '/menus/main')).statusCode).toBe(200);
    expect((await cw.pub('/menus/main')).statusCode).toBe(404);
    const trash = (await cw.manage('GET', '/trash?kind=menu')).json().data;
    expect(trash).toEqual([expect.objectContaining({ kind: 'menu', title: 'Main menu' })]);
    expect((await cw.manage('POST', '/trash/restore', { kind: 'menu', id: trash[0].id })).statusCode).toBe(200);
    expect((await cw.pub('/menus/main')).statusCode).toBe(200);
  });
});
