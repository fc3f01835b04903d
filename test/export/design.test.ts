import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPluginWorld, type PluginWorld } from '../plugins/support.ts';
import type { OperationContext } from '../../services/core/context.ts';
import { readExportFile } from '../../services/export/files.ts';
import { call, liveFiles, runToEnd } from './support.ts';

/**
 * Design settings applied (issue 22 item 5): the permalink rule places entry pages, the sitemap and
 * the feed follow it and old paths redirect (export and Public API); saved header, template part,
 * template and widget layout render in the exported HTML and are readable on the Public API, and
 * the next public read after a design change shows it.
 */
describe('static export: design settings applied', { timeout: 300_000 }, () => {
  let pw: PluginWorld;
  let key: string;
  let ctx: OperationContext;
  const ids: Record<string, string> = {};

  const page = async (path: string) => (await readExportFile(ctx.db, ctx.site._id, path))?.body.toString('utf8');
  const publicGet = (url: string) => pw.world.app.inject({ method: 'GET', url: `/api/v1${url}` });
  const manage = (method: string, url: string, body?: unknown) => pw.manage(method, url, key, body);

  beforeAll(async () => {
    pw = await startPluginWorld({ worker: true });
    ctx = await pw.site();
    const s = pw.world.services;
    key = await pw.keyWith(['content:read', 'settings:read', 'settings:manage']);
    const created = await call<{ id: string }>(s, ctx, 'content.create', { title: 'Hello world', slug: 'hello' });
    await call(s, ctx, 'content.publish', { id: created.id });
    ids.hello = created.id;
    const about = await call<{ id: string }>(s, ctx, 'content.create', { title: 'About', type: 'page', slug: 'about' });
    await call(s, ctx, 'content.publish', { id: about.id });
    ids.about = about.id;
    await call(s, ctx, 'widgetAreas.create', { key: 'sidebar', name: 'Sidebar' });
    await call(s, ctx, 'widgetAreas.create', { key: 'pages-only', name: 'Pages only' });
    await call(s, ctx, 'widgets.create', { area: 'sidebar', type: 'text', title: 'Side note', settings: { text: 'From the sidebar' } });
    await call(s, ctx, 'widgets.create', { area: 'pages-only', type: 'text', title: 'Page note', settings: { text: 'Only on pages' } });
  }, 300_000);
  afterAll(() => pw?.close(), 120_000);

  it("the default rule keeps today's folders; a new rule moves pages, sitemap and feed, and old paths redirect", async () => {
    expect((await publicGet('/design/permalinks')).json()).toMatchObject({ structure: '/%postname%/', typeBases: {} });
    await runToEnd(pw, key, 'full');
    expect([...(await liveFiles(ctx)).keys()]).toEqual(expect.arrayContaining(['en/post/hello/index.html', 'en/post/hello.json', 'en/page/about/index.html']));
    expect((await publicGet('/redirects?path=/en/post/hello')).statusCode).toBe(404);

    const put = await manage('PUT', '/permalinks', {
      structure: '/%year%/%postname%/',
      categoryBase: 'category',
      tagBase: 'tag',
      typeBases: { post: 'blog', page: '' },
    });
    expect(put.statusCode).toBe(200);
    const year = new Date().getUTCFullYear();
    // The Public API tells at once (the write moved the public generation), and old paths redirect there.
    expect((await publicGet('/design/permalinks')).json()).toMatchObject({ structure: '/%year%/%postname%/', typeBases: { post: 'blog', page: '' } });
    expect((await publicGet('/redirects?path=/en/post/hello/')).json()).toEqual({ from: '/en/post/hello', to: `/en/blog/${year}/hello`, status: 301 });
    expect((await publicGet('/redirects?path=/en/page/about')).json()).toMatchObject({ to: `/en/${year}/about` });

    const done = await runToEnd(pw, key, 'incremental');
    // A rule change moves every entry page: the run is full, whatever was asked.
    expect(done.lastRun).toMatchObject({ mode: 'full', status: 'succeeded' });
    const paths = [...(await liveFiles(ctx)).keys()];
    expect(paths).toEqual(expect.arrayContaining([`en/blog/${year}/hello/index.html`, `en/blog/${year}/hello.json`, `en/${year}/about/index.html`]));
    expect(paths).not.toContain('en/post/hello.json');
    const sitemap = (await page('sitemap.xml'))!;
    expect(sitemap).toContain(`/en/blog/${year}/hello/</loc>`);
    expect(sitemap).not.toContain('/en/post/hello/');
    const feed = (await page('en/feed.xml'))!;
    expect(feed).toContain(`/en/blog/${year}/hello/"/>`);
    expect(feed).not.toContain('/en/post/hello/');
    expect(await page('en/index.html')).toContain(`href="../en/blog/${year}/hello/"`);
    // Old paths: a `_redirects` rule and a redirect page for hosts that ignore the file.
    expect(await page('_redirects')).toContain(`/en/post/hello /en/blog/${year}/hello/ 301`);
    expect(await page('en/post/hello/index.html')).toContain(`url=../../../en/blog/${year}/hello/`);

    // Back to the default: the redirects follow (no rule from a path that is live again, no chain).
    expect((await manage('DELETE', '/permalinks')).statusCode).toBe(200);
    expect((await publicGet('/redirects?path=/en/post/hello')).statusCode).toBe(404);
    expect((await publicGet(`/redirects?path=/en/blog/${year}/hello`)).json()).toMatchObject({ to: '/en/post/hello' });
    await runToEnd(pw, key, 'full');
    expect([...(await liveFiles(ctx)).keys()]).toContain('en/post/hello/index.html');
  });

  it('categoryBase and tagBase place the term archives (pages and links); old archive paths redirect; the public entry path is the export folder', async () => {
    const s = pw.world.services;
    const news = await call<{ id: string }>(s, ctx, 'terms.create', { slug: 'category', name: 'News', termSlug: 'news' });
    const green = await call<{ id: string }>(s, ctx, 'terms.create', { slug: 'tag', name: 'Green', termSlug: 'green' });
    await call(s, ctx, 'content.terms.put', { id: ids.hello, terms: { category: [news.id], tag: [green.id] } });
    await runToEnd(pw, key, 'full');
    let paths = [...(await liveFiles(ctx)).keys()];
    expect(paths).toEqual(expect.arrayContaining(['en/category/news/index.html', 'en/tag/green/index.html']));
    expect(await page('en/post/hello/index.html')).toContain('<a rel="tag" href="../../../en/category/news/">News</a>');
    expect((await publicGet('/content/hello')).json().path).toBe('/en/post/hello');

    const rule = { structure: '/%postname%/', categoryBase: 'topics', tagBase: 'labels/all', typeBases: {} };
    expect((await manage('PUT', '/permalinks', rule)).statusCode).toBe(200);
    try {
      expect((await publicGet('/redirects?path=/en/category/news')).json()).toEqual({ from: '/en/category/news', to: '/en/topics/news', status: 301 });
      expect((await publicGet('/redirects?path=/en/tag/green/')).json()).toMatchObject({ to: '/en/labels/all/green' });
      // Entries did not move: no rule for them.
      expect((await publicGet('/redirects?path=/en/post/hello')).statusCode).toBe(404);
      await runToEnd(pw, key, 'full');
      paths = [...(await liveFiles(ctx)).keys()];
      expect(paths).toEqual(expect.arrayContaining(['en/topics/news/index.html', 'en/labels/all/green/index.html']));
      // The old archive folder is now the redirect page (for hosts that ignore `_redirects`).
      expect(await page('en/category/news/index.html')).toContain('url=../../../en/topics/news/');
      const hello = (await page('en/post/hello/index.html'))!;
      expect(hello).toContain('<a rel="tag" href="../../../en/topics/news/">News</a>');
      expect(hello).toContain('<a rel="tag" href="../../../en/labels/all/green/">Green</a>');
      expect(await page('en/topics/news/index.html')).toContain('href="../../../en/post/hello/"');
      expect(await page('_redirects')).toContain('/en/category/news /en/topics/news/ 301');
      // The entry's JSON in the export carries the same path as the Public API.
      expect(JSON.parse((await page('en/post/hello.json'))!).path).toBe('/en/post/hello');
    } finally {
      expect((await manage('DELETE', '/permalinks')).statusCode).toBe(200);
    }
    expect((await publicGet('/redirects?path=/en/category/news')).statusCode).toBe(404);
  });

  it('a saved header, template part, template and widget layout render in the export and on the Public API', async () => {
    const before = (await publicGet('/design/headers')).json();
    expect(before).toMatchObject({ default: 'header' });
    expect(before.headers.map((h: { part: string }) => h.part)).toEqual(['header']);

    expect(
      (
        await manage('PUT', '/template-parts/promo-header', {
          area: 'header',
          title: 'Promo',
          blocks: { version: 1, blocks: [{ type: 'site-title' }, { type: 'paragraph', text: 'Spring <sale>' }] },
        })
      ).statusCode,
    ).toBe(200);
    expect((await manage('PUT', '/headers', { default: 'promo-header' })).statusCode).toBe(200);
    expect(
      (
        await manage('PUT', '/template-parts/byline', {
          area: 'general',
          title: 'Byline',
          blocks: { version: 1, blocks: [{ type: 'paragraph', text: 'Written by us' }] },
        })
      ).statusCode,
    ).toBe(200);
    const template = {
      title: 'Single',
      publish: true,
      blocks: {
        version: 1,
        blocks: [
          { type: 'template-part', part: 'header' },
          { type: 'template-part', part: 'byline' },
          { type: 'post-content' },
          { type: 'template-part', part: 'footer' },
        ],
      },
    };
    expect((await manage('PUT', '/templates/single', template)).statusCode).toBe(200);
    // A draft is never shown: neither on the API nor in the export.
    expect(
      (await manage('PUT', '/templates/page', { title: 'Draft', blocks: { version: 1, blocks: [{ type: 'paragraph', text: 'draft only' }] } })).statusCode,
    ).toBe(200);
    expect((await manage('PUT', '/widgets/layout', { layout: { post: ['sidebar'], page: ['pages-only'] } })).statusCode).toBe(200);

    // The Public API: the next read shows each change.
    const headers = (await publicGet('/design/headers')).json();
    expect(headers.default).toBe('promo-header');
    expect(headers.headers.map((h: { part: string }) => h.part)).toEqual(['header', 'promo-header']);
    const parts = (await publicGet('/design/template-parts')).json().parts.map((p: { part: string }) => p.part);
    expect(parts).toEqual(['byline', 'footer', 'header', 'promo-header']);
    expect((await publicGet('/design/template-parts/byline')).json()).toMatchObject({ area: 'general', title: 'Byline', customized: true });
    const single = (await publicGet('/design/templates/single')).json();
    expect(single).toMatchObject({ slug: 'single', source: 'custom', blocks: template.blocks });
    expect(single.draft).toBeUndefined();
    expect((await publicGet('/design/templates/page')).json()).toMatchObject({ source: 'theme' });
    expect((await publicGet('/design/templates/nope')).statusCode).toBe(404);
    const widgets = (await publicGet('/design/widgets')).json();
    expect(widgets.layout).toEqual({ post: ['sidebar'], page: ['pages-only'] });
    expect(widgets.areas.map((a: { key: string; widgets: Array<{ title: string }> }) => [a.key, a.widgets.map((w) => w.title)])).toEqual([
      ['pages-only', ['Page note']],
      ['sidebar', ['Side note']],
    ]);

    await runToEnd(pw, key, 'incremental');
    const hello = (await page('en/post/hello/index.html'))!;
    expect(hello).toContain('<body class="template-single">');
    expect(hello).toContain('<header class="part part-promo-header">');
    expect(hello).toContain('Spring &lt;sale&gt;');
    expect(hello).toContain('<div class="part part-byline">');
    expect(hello.indexOf('Written by us')).toBeLessThan(hello.indexOf('<h1>Hello world</h1>'));
    expect(hello).toContain('Side note');
    expect(hello).not.toContain('Page note');
    expect(hello).not.toMatch(/<script/i);
    expect(hello).toContain('http-equiv="Content-Security-Policy"');
    const about = (await page('en/page/about/index.html'))!;
    expect(about).not.toContain('template-single');
    expect(about).not.toContain('draft only');
    expect(about).toContain('Page note');
    expect(about).not.toContain('Side note');
    expect(about).toContain('<header class="part part-promo-header">');

    // A page that asks for no header (`header-ref`) gets none.
    await call(pw.world.services, ctx, 'content.headerRef.put', { id: ids.about, headerRef: { mode: 'none' } });
    await call(pw.world.services, ctx, 'content.publish', { id: ids.about });
    await runToEnd(pw, key, 'incremental');
    const bare = (await page('en/page/about/index.html'))!;
    expect(bare).not.toContain('<header');
    expect(bare).toContain('<h1>About</h1>');
  });
});
