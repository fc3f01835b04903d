import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSiteWorld, type SiteWorld } from './support.ts';

let sw: SiteWorld;
let reader: string;
beforeAll(async () => {
  sw = await startSiteWorld();
  reader = await sw.keyWith(['content:read']);
});
afterAll(() => sw?.close());

const blocks = (text: string) => ({ version: 1, blocks: [{ type: 'paragraph', text }] });
const get = async (url: string, key?: string) => {
  const res = await sw.manage('GET', url, undefined, key);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
/** A bad write answers `status` with `{ error }` and leaves what `url` shows unchanged. */
async function refused(method: string, url: string, body: unknown, status: number, readUrl: string) {
  const before = await get(readUrl);
  const res = await sw.manage(method, url, body);
  expect(res.statusCode, `${method} ${url} ${JSON.stringify(body)}: ${res.body}`).toBe(status);
  expect(typeof res.json().error).toBe('string');
  expect(await get(readUrl)).toEqual(before);
}

describe('template parts and headers', () => {
  it('round-trips parts and chooses the default header from the library', async () => {
    expect((await get('/template-parts/header', reader)).customized).toBe(false);
    const put = await sw.manage('PUT', '/template-parts/header-minimal', { area: 'header', title: 'Minimal', blocks: blocks('logo') });
    expect(put.statusCode).toBe(200);
    expect(await get('/template-parts/header-minimal', reader)).toMatchObject({
      part: 'header-minimal',
      area: 'header',
      customized: true,
      blocks: blocks('logo'),
    });
    const headers = await get('/headers', reader);
    expect(headers.default).toBe('header');
    expect(headers.data.map((h: { part: string }) => h.part)).toEqual(['header', 'header-minimal']);
    expect((await sw.manage('PUT', '/headers', { default: 'header-minimal' })).statusCode).toBe(200);
    expect((await get('/headers')).default).toBe('header-minimal');
  });

  it('refuses bad parts and headers', async () => {
    await refused('PUT', '/template-parts/footer', { area: 'nowhere', title: 'F' }, 400, '/template-parts/footer');
    await refused('PUT', '/template-parts/footer', { area: 'footer', title: 'F', blocks: { version: 2, blocks: [] } }, 400, '/template-parts/footer');
    await refused('PUT', '/template-parts/Bad_Name', { area: 'footer', title: 'F' }, 400, '/headers');
    await refused('PUT', '/template-parts/header-minimal', { area: 'footer', title: 'Moved' }, 400, '/headers');
    await refused('PUT', '/headers', { default: 'footer' }, 400, '/headers');
    expect((await sw.manage('GET', '/template-parts/nope')).statusCode).toBe(404);
    expect((await sw.manage('PUT', '/headers', { default: 'header' }, reader)).statusCode).toBe(403);
  });
});

describe('templates', () => {
  it('saves a draft, publishes, discards the draft and resets to the theme default', async () => {
    const list = (await get('/templates', reader)).data;
    expect(list.find((t: { slug: string }) => t.slug === 'single')).toMatchObject({ source: 'theme', hasDraft: false });
    const draft = (await sw.manage('PUT', '/templates/single', { title: 'Single', blocks: blocks('draft') })).json();
    expect(draft).toMatchObject({ source: 'theme', draft: { title: 'Single', blocks: blocks('draft') } });
    const live = (await sw.manage('PUT', '/templates/single', { title: 'Single', blocks: blocks('live'), publish: true })).json();
    expect(live).toMatchObject({ source: 'custom', blocks: blocks('live'), draft: null });
    await sw.manage('PUT', '/templates/single', { title: 'Single', blocks: blocks('second draft') });
    const discarded = (await sw.manage('DELETE', '/templates/single?discard=draft')).json();
    expect(discarded).toMatchObject({ source: 'custom', blocks: blocks('live'), draft: null });
    const reset = (await sw.manage('DELETE', '/templates/single')).json();
    expect(reset).toMatchObject({ source: 'theme', draft: null });
    expect((await get('/templates/single')).source).toBe('theme');
    expect((await sw.manage('PUT', '/templates/single-product', { title: 'Product', blocks: blocks('p'), publish: true })).statusCode).toBe(200);
    expect((await get('/templates')).data.some((t: { slug: string }) => t.slug === 'single-product')).toBe(true);
  });

  it('refuses unknown slots and bad bodies', async () => {
    await refused('PUT', '/templates/whatever', { title: 'X', blocks: blocks('x') }, 400, '/templates');
    await refused('PUT', '/templates/page', { title: '', blocks: blocks('x') }, 400, '/templates/page');
    await refused('DELETE', '/templates/page?discard=some', undefined, 400, '/templates/page');
    expect((await sw.manage('GET', '/templates/nope')).statusCode).toBe(404);
    expect((await sw.manage('DELETE', '/templates/page', undefined, reader)).statusCode).toBe(403);
  });
});

describe('customizer', () => {
  it('keeps a draft apart from the published values until published', async () => {
    const drafted = (await sw.manage('PATCH', '/themes/customize', { values: { 'colors.primaryColor': '#112233', 'layout.width': 1200 } })).json();
    expect(drafted).toMatchObject({ published: {}, draft: { 'colors.primaryColor': '#112233', 'layout.width': 1200 } });
    const published = (await sw.manage('PATCH', '/themes/customize', { values: { 'layout.width': null }, publish: true })).json();
    expect(published).toMatchObject({ published: { 'colors.primaryColor': '#112233' }, draft: null });
    await sw.manage('PATCH', '/themes/customize', { values: { logo: 'media-1' } });
    expect((await sw.manage('DELETE', '/themes/customize')).json()).toMatchObject({ published: { 'colors.primaryColor': '#112233' }, draft: null });
    expect((await get('/themes/customize', reader)).published).toEqual({ 'colors.primaryColor': '#112233' });
  });

  it('refuses bad values', async () => {
    await refused('PATCH', '/themes/customize', { values: { 'colors.accentColor': 'red' } }, 400, '/themes/customize');
    await refused('PATCH', '/themes/customize', { values: { 'Bad Key': 1 } }, 400, '/themes/customize');
    await refused('PATCH', '/themes/customize', { values: { nested: { a: 1 } } }, 400, '/themes/customize');
    expect((await sw.manage('PATCH', '/themes/customize', { values: {} }, reader)).statusCode).toBe(403);
  });
});

describe('widgets', () => {
  it('areas, widgets, order, layout and area removal', async () => {
    expect((await sw.manage('POST', '/widgets/areas', { key: 'sidebar', name: 'Sidebar' })).statusCode).toBe(201);
    const a = (await sw.manage('POST', '/widgets', { type: 'search', area: 'sidebar' })).json();
    const b = (await sw.manage('POST', '/widgets', { type: 'text', title: 'About', settings: { text: 'hi' }, area: 'sidebar' })).json();
    expect([a.position, b.position]).toEqual([0, 1]);
    const reordered = (await sw.manage('PUT', '/widgets/areas/sidebar', { name: 'Side', widgets: [b.id, a.id] })).json();
    expect(reordered.widgets.map((w: { id: string }) => w.id)).toEqual([b.id, a.id]);
    expect((await sw.manage('PUT', `/widgets/${a.id}`, { type: 'search', title: 'Find', area: 'sidebar' })).json()).toMatchObject({ title: 'Find' });
    expect((await sw.manage('PUT', '/widgets/layout', { layout: { post: ['sidebar'], page: [] } })).statusCode).toBe(200);
    expect((await get('/widgets/layout', reader)).layout).toEqual({ post: ['sidebar'], page: [] });
    expect((await get('/widgets?area=sidebar', reader)).data).toHaveLength(2);

    expect((await sw.manage('DELETE', '/widgets/areas/sidebar')).statusCode).toBe(200);
    expect((await get('/widgets?area=inactive')).data).toHaveLength(2);
    expect((await get('/widgets/layout')).layout).toEqual({ post: [], page: [] });
    expect((await sw.manage('DELETE', `/widgets/${b.id}`)).statusCode).toBe(200);
    expect((await get('/widgets')).data.map((w: { id: string }) => w.id)).toEqual([a.id]);
  });

  it('refuses bad widgets, areas and layouts', async () => {
    await sw.manage('POST', '/widgets/areas', { key: 'footer', name: 'Footer' });
    await refused('POST', '/widgets/areas', { key: 'footer', name: 'Again' }, 409, '/widgets/areas');
    await refused('POST', '/widgets/areas', { key: 'Bad Key', name: 'X' }, 400, '/widgets/areas');
    await refused('POST', '/widgets', { type: 'carousel', area: 'footer' }, 400, '/widgets');
    await refused('POST', '/widgets', { type: 'text', area: 'nowhere' }, 400, '/widgets');
    await refused('PUT', '/widgets/areas/footer', { name: 'F', widgets: ['missing'] }, 400, '/widgets/areas/footer');
    await refused('PUT', '/widgets/layout', { layout: { post: ['nowhere'] } }, 400, '/widgets/layout');
    await refused('PUT', '/widgets/layout', { layout: { unicorn: ['footer'] } }, 400, '/widgets/layout');
    expect((await sw.manage('PUT', '/widgets/nope', { type: 'text' })).statusCode).toBe(404);
    expect((await sw.manage('POST', '/widgets', { type: 'text' }, reader)).statusCode).toBe(403);
  });
});

describe('patterns, reusable blocks, error pages', () => {
  it('imports, exports, replaces and deletes library items', async () => {
    const imported = await sw.manage('PUT', '/patterns', {
      items: [
        { slug: 'hero', title: 'Hero', blocks: blocks('hero') },
        { slug: 'cta', title: 'Call to action', blocks: blocks('cta') },
      ],
    });
    expect(imported.statusCode).toBe(200);
    const exported = await get('/patterns', reader);
    expect(exported.data.map((p: { slug: string }) => p.slug).sort()).toEqual(['cta', 'hero']);
    expect(exported.data.find((p: { slug: string }) => p.slug === 'hero')).toMatchObject({ category: 'uncategorized', blocks: blocks('hero') });
    const first = await get('/patterns?limit=1');
    expect(first.page.nextCursor).not.toBeNull();
    const replaced = (await sw.manage('PUT', '/patterns', { items: [{ slug: 'hero', title: 'Hero 2', blocks: blocks('h2') }], replace: true })).json();
    expect(replaced.removed).toBe(1);
    expect((await get('/patterns')).data.map((p: { title: string }) => p.title)).toEqual(['Hero 2']);
    expect((await sw.manage('DELETE', '/patterns?slug=hero')).statusCode).toBe(200);
    expect((await get('/patterns')).data).toEqual([]);

    expect((await sw.manage('PUT', '/reusable-blocks', { items: [{ slug: 'signup', title: 'Signup', blocks: blocks('form') }] })).statusCode).toBe(200);
    expect((await get('/reusable-blocks')).data).toHaveLength(1);
    expect((await sw.manage('PUT', '/error-pages', { items: [{ code: 404, title: 'Lost?', blocks: blocks('not here') }] })).statusCode).toBe(200);
    expect((await get('/error-pages', reader)).data).toEqual([expect.objectContaining({ code: '404', title: 'Lost?' })]);
    expect((await sw.manage('DELETE', '/error-pages?code=404')).statusCode).toBe(200);
  });

  it('refuses bad imports as a whole', async () => {
    await sw.manage('PUT', '/reusable-blocks', { items: [{ slug: 'keep', title: 'Keep', blocks: blocks('k') }] });
    await refused(
      'PUT',
      '/reusable-blocks',
      {
        items: [
          { slug: 'ok', title: 'Ok', blocks: blocks('x') },
          { slug: 'BAD SLUG', title: 'x', blocks: blocks('x') },
        ],
        replace: true,
      },
      400,
      '/reusable-blocks',
    );
    await refused(
      'PUT',
      '/reusable-blocks',
      {
        items: [
          { slug: 'twice', title: 'a', blocks: blocks('a') },
          { slug: 'twice', title: 'b', blocks: blocks('b') },
        ],
      },
      400,
      '/reusable-blocks',
    );
    await refused('PUT', '/error-pages', { items: [{ code: 418, title: 'Teapot', blocks: blocks('t') }] }, 400, '/error-pages');
    await refused('PUT', '/patterns', { items: [{ slug: 'x', title: 'X' }] }, 400, '/patterns');
    await refused('DELETE', '/patterns?slug=none', undefined, 404, '/patterns');
    expect((await sw.manage('PUT', '/patterns', { items: [] }, reader)).statusCode).toBe(403);
  });
});

describe('permalinks', () => {
  it('round-trips and resets', async () => {
    expect(await get('/permalinks', reader)).toMatchObject({ structure: '/%postname%/', customized: false });
    const body = { structure: '/%year%/%monthnum%/%postname%/', categoryBase: 'topics', tagBase: 'tag', typeBases: { product: 'shop' } };
    expect((await sw.manage('PUT', '/permalinks', body)).statusCode).toBe(200);
    expect(await get('/permalinks')).toMatchObject({ ...body, customized: true });
    expect((await sw.manage('DELETE', '/permalinks')).json()).toMatchObject({ structure: '/%postname%/', customized: false });
  });

  it('refuses structures that do not identify an entry or use unknown tags', async () => {
    const base = { categoryBase: 'category', tagBase: 'tag' };
    await refused('PUT', '/permalinks', { ...base, structure: '/%year%/' }, 400, '/permalinks');
    await refused('PUT', '/permalinks', { ...base, structure: '/%hour%/%postname%/' }, 400, '/permalinks');
    await refused('PUT', '/permalinks', { ...base, structure: 'no-slash/%postname%' }, 400, '/permalinks');
    await refused('PUT', '/permalinks', { ...base, structure: '/%postname%/', categoryBase: '../up' }, 400, '/permalinks');
    expect((await sw.manage('DELETE', '/permalinks', undefined, reader)).statusCode).toBe(403);
  });
});
