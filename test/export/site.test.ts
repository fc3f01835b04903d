import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace } from '../support/world.ts';
import { startPluginWorld, type PluginWorld } from '../plugins/support.ts';
import { createSiteResolver } from '../../services/tenancy/site-resolver.ts';
import { createContext, type OperationContext } from '../../services/core/context.ts';
import { systemPrincipal } from '../../services/core/principal.ts';
import { newId } from '../../services/core/ids.ts';
import { readExportFile } from '../../services/export/files.ts';
import { archivedPaths, call, checkLinks, listFiles, liveFiles, runToEnd, unpack } from './support.ts';
import { eventually } from '../support/polling.ts';

const ALL_BLOCKS = [
  { type: 'heading', level: 2, text: 'Section <one>' },
  { type: 'paragraph', text: 'Hello <script>alert(1)</script> & "friends"' },
  { type: 'list', items: ['one', { text: 'two', children: ['two.a'] }], ordered: true },
  { type: 'quote', text: 'To be', cite: 'Hamlet' },
  { type: 'code', language: 'js', text: 'if (a < b) {}' },
  { type: 'preformatted', text: '  spaced' },
  { type: 'html', html: '<iframe src="javascript:alert(1)"></iframe>' },
  { type: 'image', mediaId: 'm1', alt: 'A "cat"', caption: 'Cat' },
  { type: 'gallery', images: [{ mediaId: 'm2', alt: 'one' }, { alt: 'no source' }] },
  { type: 'video', mediaId: 'm3' },
  { type: 'audio', mediaId: 'm4' },
  { type: 'file', mediaId: 'm5', name: 'Report' },
  { type: 'embed', url: 'https://example.org/watch', title: 'Clip' },
  { type: 'table', head: ['a', 'b'], rows: [['1', '<2>']] },
  { type: 'separator' },
  { type: 'spacer', height: 10 },
  { type: 'button', text: 'Go', url: '/en/page/about/' },
  { type: 'buttons', buttons: [{ text: 'Bad' }] },
  { type: 'columns', columns: [{ blocks: [{ type: 'paragraph', text: 'left' }] }, { blocks: [{ type: 'paragraph', text: 'right' }] }] },
  { type: 'group', blocks: [{ type: 'paragraph', text: 'grouped' }] },
  { type: 'reusable', ref: 'missing-one' },
  { type: 'mystery-widget', text: 'kept <b>' },
];

/**
 * The exported site as a visitor and a static host see it: every block type, locales, lists with
 * paging, taxonomy pages, menus, widgets, feed, sitemap, error pages, redirects; the archive
 * (tar.gz and tar with ranges) unpacks to a site whose links all resolve; the preview serves it
 * per site; an incremental run after one change rewrites exactly the affected pages.
 */
describe('static export: the site, the archive, the preview', { timeout: 300_000 }, () => {
  let pw: PluginWorld;
  let key: string;
  let ctx: OperationContext;
  const ids: Record<string, string> = {};
  const unpacked: string[] = [];

  const entry = async (input: Record<string, unknown>, publish = true) => {
    const created = await call<{ id: string }>(pw.world.services, ctx, 'content.create', input);
    if (publish) await call(pw.world.services, ctx, 'content.publish', { id: created.id });
    return created.id;
  };
  const page = async (path: string) => (await readExportFile(ctx.db, ctx.site._id, path))?.body.toString('utf8');

  beforeAll(async () => {
    pw = await startPluginWorld({ worker: true });
    Object.assign(pw.world.services.exportTuning, { batchSize: 10, batchPauseMs: 0 });
    ctx = await pw.site();
    const s = pw.world.services;
    key = await pw.keyWith(['content:read', 'content:update', 'content:publish', 'content:delete', 'settings:read', 'settings:manage', 'themes:activate']);
    await call(s, ctx, 'languages.create', { code: 'de', name: 'Deutsch' });
    const term = await call<{ id: string }>(s, ctx, 'terms.create', { slug: 'category', name: 'News & Views' });
    ids.alpha = await entry({ title: 'Alpha <1>', slug: 'alpha', excerpt: 'First & best', blocks: { version: 1, blocks: ALL_BLOCKS } });
    ids.alphaDe = await entry({ title: 'Alpha auf Deutsch', slug: 'alpha', locale: 'de' });
    ids.about = await entry({ title: 'About', type: 'page', slug: 'about' });
    ids.draft = await entry({ title: 'Draft only', slug: 'draft-only' }, false);
    // The newest entry's title needs escaping: the feed (newest 20) shows it, not Alpha (published first).
    for (let i = 1; i <= 21; i++) ids[`p${i}`] = await entry({ title: i === 21 ? 'Filler 21 <newest> & co' : `Filler ${i}`, slug: `filler-${i}` });
    await call(s, ctx, 'content.terms.put', { id: ids.alpha, terms: { category: [term.id] } });
    await call(s, ctx, 'content.publish', { id: ids.alpha });
    await call(s, ctx, 'menus.create', {
      slug: 'main',
      name: 'Main',
      location: 'primary',
      items: [
        { label: 'About us', entryId: ids.about },
        { label: 'Elsewhere', url: 'https://example.org/' },
      ],
    });
    await call(s, ctx, 'widgetAreas.create', { key: 'sidebar', name: 'Sidebar' });
    await call(s, ctx, 'widgets.create', { area: 'sidebar', type: 'text', title: 'Hi <there>', settings: { text: 'Static <b>text</b>' } });
    await call(s, ctx, 'widgets.create', { area: 'sidebar', type: 'recent-posts', title: 'Recent' });
    await call(s, ctx, 'redirects.create', { from: '/old-alpha', to: '/en/post/alpha/', status: 301 });
  }, 300_000);
  afterAll(async () => {
    for (const dir of unpacked) rmSync(dir, { recursive: true, force: true });
    await pw?.close();
  }, 120_000);

  it('renders a complete site: every block type escaped, an unknown one by the fallback, locales, menus, widgets', async () => {
    const done = await runToEnd(pw, key, 'full');
    expect(done.lastRun).toMatchObject({ mode: 'full', status: 'succeeded', rendered: 24, error: null });
    const paths = [...(await liveFiles(ctx)).keys()];
    for (const expected of [
      'index.html',
      'en/index.html',
      'en/_page/2/index.html',
      'de/index.html',
      'en/post/index.html',
      'en/post/_page/2/index.html',
      'en/page/index.html',
      'en/category/news-views/index.html', // the permalink rule's categoryBase (default `category`)
      'en/post/alpha/index.html',
      'en/post/alpha.json',
      'de/post/alpha/index.html',
      'en/page/about/index.html',
      'en/feed.xml',
      'de/feed.xml',
      'sitemap.xml',
      'robots.txt',
      '404.html',
      '500.html',
      '_redirects',
      'old-alpha/index.html',
    ])
      expect(paths, expected).toContain(expected);
    expect(paths.some((p) => p.includes('draft-only'))).toBe(false);
    expect(paths.some((p) => p.startsWith('de/category/'))).toBe(false);

    const alpha = (await page('en/post/alpha/index.html'))!;
    expect(alpha).toContain('<html lang="en">');
    expect(alpha).toContain('<h1>Alpha &lt;1&gt;</h1>');
    expect(alpha).toContain('Hello &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;friends&quot;');
    expect(alpha).not.toMatch(/<script|<iframe|="javascript:/);
    expect(alpha).toContain('<ol><li>one</li><li>two<ol><li>two.a</li></ol></li></ol>');
    expect(alpha).toContain('<blockquote><p>To be</p><cite>Hamlet</cite></blockquote>');
    expect(alpha).toContain('<code class="language-js">if (a &lt; b) {}</code>');
    expect(alpha).toContain('<pre class="block-html">&lt;iframe');
    expect(alpha).toMatch(/<img src="http:\/\/[^"]+\/media\/files\/m1" alt="A &quot;cat&quot;"/);
    expect(alpha).toContain('<figcaption>Cat</figcaption>');
    expect(alpha).toMatch(/<video controls preload="none" src="[^"]+\/media\/files\/m3">/);
    expect(alpha).toMatch(/<audio controls preload="none" src="[^"]+\/media\/files\/m4">/);
    expect(alpha).toMatch(/<a href="[^"]+\/media\/files\/m5" download>Report<\/a>/);
    expect(alpha).toContain('<a class="embed" href="https://example.org/watch">Clip</a>');
    expect(alpha).toContain('<thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td>1</td><td>&lt;2&gt;</td></tr></tbody>');
    expect(alpha).toContain('<hr>');
    expect(alpha).toContain('<a class="button" href="../../../en/page/about/">Go</a>');
    expect(alpha).toContain('<span class="button">Bad</span>');
    expect(alpha).toContain('<div class="columns"><div class="column"><p>left</p></div><div class="column"><p>right</p></div></div>');
    expect(alpha).toContain('<div class="group"><p>grouped</p></div>');
    expect(alpha).toContain('<div class="block block-unknown" data-block-type="reusable"></div>');
    expect(alpha).toContain('<div class="block block-unknown" data-block-type="mystery-widget"><p>kept &lt;b&gt;</p></div>');
    // Translations, menus (an entry item, an external one), widgets, feed, terms. Unsafe links: unsafe-links.test.ts.
    expect(alpha).toContain('<link rel="alternate" hreflang="de" href="../../../de/post/alpha/">');
    expect(alpha).toContain('<link rel="alternate" hreflang="en" href="../../../en/post/alpha/">');
    expect(alpha).toContain('<a href="../../../en/page/about/">About us</a>');
    expect(alpha).toContain('<a href="https://example.org/">Elsewhere</a>');
    expect(alpha).toContain('<h2>Hi &lt;there&gt;</h2><p>Static &lt;b&gt;text&lt;/b&gt;</p>');
    expect(alpha).not.toContain('widget-recent-posts'); // list pages only
    expect(alpha).toContain('<a rel="tag" href="../../../en/category/news-views/">News &amp; Views</a>');
    const de = (await page('de/post/alpha/index.html'))!;
    expect(de).toContain('<html lang="de">');
    expect(de).toContain('hreflang="en" href="../../../en/post/alpha/"');

    const home = (await page('en/index.html'))!;
    expect(home).toContain('widget-recent-posts');
    expect(home).toContain('Page 1 of 2');
    expect(home).toContain('<a rel="next" href="../en/_page/2/">Older</a>');
    expect(await page('en/_page/2/index.html')).toContain('<a rel="prev" href="../../../en/">Newer</a>');
    expect(await page('en/category/news-views/index.html')).toContain('<a href="../../../en/post/alpha/">Alpha &lt;1&gt;</a>');
    const feed = (await page('en/feed.xml'))!;
    expect(feed).toContain('<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="en">');
    expect(feed).toContain('<title>Filler 21 &lt;newest&gt; &amp; co</title>');
    // Re-publishing keeps the first publication date (content/lifecycle.ts): Alpha is the oldest, past the 20 newest.
    expect(feed).not.toContain('Alpha &lt;1&gt;');
    expect((feed.match(/<entry>/g) ?? []).length).toBe(20);
    const sitemap = (await page('sitemap.xml'))!;
    expect((sitemap.match(/<url>/g) ?? []).length).toBeGreaterThanOrEqual(24);
    expect(sitemap).toMatch(/<xhtml:link rel="alternate" hreflang="de" href="[^"]+\/de\/post\/alpha\/"\/>/);
    expect(await page('_redirects')).toBe('/old-alpha /en/post/alpha/ 301\n');
    expect(await page('old-alpha/index.html')).toContain('<meta http-equiv="refresh" content="0; url=../en/post/alpha/">');
    expect(await page('404.html')).toContain('<h1>Page not found</h1>');
  });

  it('downloads the export as tar.gz that unpacks to exactly the served pages, all links resolving', async () => {
    const res = await pw.manage('GET', '/static-export/download', key);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/gzip');
    expect(res.headers['content-length']).toBeUndefined();
    expect(res.headers['content-disposition']).toMatch(/attachment; filename=".+-export\.tar\.gz"/);
    const etag = res.headers.etag as string;
    expect(etag).toMatch(/^"[^"]+"$/);
    const dir = unpack(res.rawPayload, true);
    unpacked.push(dir);
    const files = listFiles(dir);
    expect(files).toEqual([...(await liveFiles(ctx)).keys()].sort());
    const { broken, checked, external } = checkLinks(dir);
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(150);
    expect(external.every((url) => /^https?:\/\//.test(url))).toBe(true);
    const again = await pw.world.app.inject({
      method: 'GET',
      url: '/api/manage/v1/static-export/download',
      headers: { authorization: `Bearer ${key}`, 'if-none-match': etag },
    });
    expect(again.statusCode).toBe(304);
  });

  it('tar: exact Content-Length, byte ranges and If-Range', async () => {
    const full = await pw.manage('GET', '/static-export/download?format=tar', key);
    expect(full.statusCode).toBe(200);
    expect(full.headers['content-type']).toBe('application/x-tar');
    expect(full.headers['accept-ranges']).toBe('bytes');
    expect(Number(full.headers['content-length'])).toBe(full.rawPayload.length);
    expect(full.rawPayload.length % 512).toBe(0);
    const etag = full.headers.etag as string;
    const get = (headers: Record<string, string>) =>
      pw.world.app.inject({ method: 'GET', url: '/api/manage/v1/static-export/download?format=tar', headers: { authorization: `Bearer ${key}`, ...headers } });
    const part = await get({ range: 'bytes=700-5000' });
    expect(part.statusCode).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 700-5000/${full.rawPayload.length}`);
    expect(part.rawPayload.equals(full.rawPayload.subarray(700, 5001))).toBe(true);
    const tail = await get({ range: 'bytes=-1500' });
    expect(tail.rawPayload.equals(full.rawPayload.subarray(full.rawPayload.length - 1500))).toBe(true);
    const stale = await get({ range: 'bytes=0-10', 'if-range': '"something-else"' });
    expect(stale.statusCode).toBe(200);
    expect(stale.rawPayload.length).toBe(full.rawPayload.length);
    const beyond = await get({ range: `bytes=${full.rawPayload.length + 10}-` });
    expect(beyond.statusCode).toBe(416);
    expect(beyond.json().error).toBeTruthy();
    const bad = await pw.manage('GET', '/static-export/download?format=zip', key);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatch(/format/);
    const dir = unpack(full.rawPayload, false);
    unpacked.push(dir);
    expect(checkLinks(dir).broken).toEqual([]);
    void etag;
  });

  it('the preview serves the site on its own host: types, ETags, folder redirects, the site redirects, its 404 page', async () => {
    const get = (url: string, headers: Record<string, string> = {}) => pw.world.app.inject({ method: 'GET', url, headers });
    const alpha = await get('/static-preview/en/post/alpha/');
    expect(alpha.statusCode).toBe(200);
    expect(alpha.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(alpha.headers['content-security-policy']).toContain("default-src 'none'");
    expect(alpha.body).toContain('<h1>Alpha &lt;1&gt;</h1>');
    const etag = alpha.headers.etag as string;
    expect((await get('/static-preview/en/post/alpha/', { 'if-none-match': etag })).statusCode).toBe(304);
    expect((await get('/static-preview/en/feed.xml')).headers['content-type']).toBe('application/atom+xml; charset=utf-8');
    expect((await get('/static-preview/sitemap.xml')).headers['content-type']).toBe('application/xml; charset=utf-8');
    expect((await get('/static-preview/en/post/alpha.json')).json()).toMatchObject({ id: ids.alpha, slug: 'alpha' });
    const folder = await get('/static-preview/en/post/alpha');
    expect(folder.statusCode).toBe(301);
    expect(folder.headers.location).toBe('/static-preview/en/post/alpha/');
    const moved = await get('/static-preview/old-alpha');
    expect(moved.statusCode).toBe(301);
    expect(moved.headers.location).toBe('/static-preview/old-alpha/');
    const rule = await get('/static-preview/old-alpha/');
    expect(rule.statusCode).toBe(200);
    expect(rule.body).toContain('http-equiv="refresh"');
    const missing = await get('/static-preview/en/post/nothing-here/');
    expect(missing.statusCode).toBe(404);
    expect(missing.body).toContain('Page not found');
    expect((await get('/static-preview/../../etc/passwd')).statusCode).toBe(404);
    expect((await get('/static-preview/%2e%2e/index.html')).statusCode).toBe(404);
    const root = await get('/static-preview');
    expect(root.statusCode).toBe(301);
  });

  it('the preview of one site never serves another site’s files', async () => {
    const s = pw.world.services;
    const host = `b${newId().slice(-8)}.export.test`;
    const { site } = await createWorkspace(s, {
      name: 'Other',
      domains: [host],
      admin: { email: `b-${newId()}@example.test`, password: 'correct horse battery', name: 'B' },
    });
    const scope = await createSiteResolver(s).resolve(host);
    const other = createContext(s, scope!, systemPrincipal('test'), { id: 't', ip: '127.0.0.1' });
    const created = await call<{ id: string }>(s, other, 'content.create', { title: 'Only on B', slug: 'only-on-b' });
    await call(s, other, 'content.publish', { id: created.id });
    const { requestId } = await call<{ requestId: string }>(s, other, 'staticExport.run', { mode: 'full' });
    await eventually(
      async () => {
        const st = await call<{ lastRun: { requestIds: string[] } | null; status: string }>(s, other, 'staticExport.status');
        return st.lastRun?.requestIds.includes(requestId) && st.status === 'idle';
      },
      'site B export',
      150_000,
    );
    expect(site._id).not.toBe(ctx.site._id);
    const onB = (url: string) => pw.world.app.inject({ method: 'GET', url, headers: { host } });
    expect((await onB('/static-preview/en/post/only-on-b/')).statusCode).toBe(200);
    expect((await onB('/static-preview/en/post/alpha/')).statusCode).toBe(404);
    expect((await pw.world.app.inject({ method: 'GET', url: '/static-preview/en/post/only-on-b/' })).statusCode).toBe(404);
    const bHome = (await onB('/static-preview/en/')).body;
    expect(bHome).toContain('Only on B');
    expect(bHome).not.toContain('Alpha');
  });

  it('incremental after one change rewrites exactly the affected pages', async () => {
    const before = await liveFiles(ctx);
    const patched = await pw.manage('PATCH', `/content/${ids.p3}`, key, { title: 'Filler three' });
    expect(patched.statusCode).toBe(200);
    expect((await pw.manage('POST', `/content/${ids.p3}/publish`, key)).statusCode).toBe(200);
    const done = await runToEnd(pw, key, 'incremental');
    expect(done.lastRun).toMatchObject({ mode: 'incremental', status: 'succeeded', rendered: 1 });
    const after = await liveFiles(ctx);
    const rewritten = [...after]
      .filter(([path, run]) => before.get(path) !== run)
      .map(([path]) => path)
      .sort();
    // The entry's page and JSON, and the site pages that list its title: the home page it is on,
    // its type list, the feed, the index and the sitemap (lastmod).
    const publishedIndex = (await page('en/index.html'))!.includes('Filler three') ? 'en/index.html' : 'en/_page/2/index.html';
    const typeIndex = publishedIndex.replace('en/', 'en/post/');
    expect(rewritten).toEqual(
      ['en/feed.xml', 'en/post/filler-3.json', 'en/post/filler-3/index.html', publishedIndex, typeIndex, 'index.json', 'sitemap.xml'].sort(),
    );
    expect(done.lastRun.written).toBe(rewritten.length);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    // The archive lists each served path once: the replaced versions are marked dead in their packs.
    const archived = await archivedPaths(ctx);
    expect(archived.length).toBe(after.size);
    expect(new Set(archived)).toEqual(new Set(after.keys()));
  });

  it('staleness: a menu change re-renders every page, a theme switch runs full, withdrawn entries lose their pages', async () => {
    await call(pw.world.services, ctx, 'menus.replace', {
      slug: 'main',
      name: 'Main',
      location: 'primary',
      items: [{ label: 'About the site', entryId: ids.about }],
    });
    const menuRun = await runToEnd(pw, key, 'incremental');
    expect(menuRun.lastRun).toMatchObject({ mode: 'incremental', status: 'succeeded', rendered: 24 });
    expect(await page('en/post/filler-7/index.html')).toContain('About the site');

    expect((await pw.manage('POST', `/content/${ids.p5}/unpublish`, key)).statusCode).toBe(200);
    expect((await pw.manage('POST', '/themes/minimal/activate', key)).statusCode).toBe(200);
    const themeRun = await runToEnd(pw, key, 'incremental');
    expect(themeRun.lastRun).toMatchObject({ mode: 'full', status: 'succeeded', rendered: 23 });
    const after = await liveFiles(ctx);
    expect(new Set(after.values())).toEqual(new Set([themeRun.lastRun.runId]));
    expect(after.has('en/post/filler-5/index.html')).toBe(false);
    expect(after.has('en/post/filler-5.json')).toBe(false);
    expect(await page('en/post/alpha/index.html')).toContain('theme=minimal');
    expect(await page('en/index.html')).not.toContain('Filler 5<');

    expect((await pw.manage('DELETE', `/content/${ids.p6}`, key)).statusCode).toBe(200);
    const trashRun = await runToEnd(pw, key, 'incremental');
    expect(trashRun.lastRun).toMatchObject({ mode: 'incremental', removed: 1 });
    const final = await liveFiles(ctx);
    expect(final.has('en/post/filler-6/index.html')).toBe(false);
    expect(final.has('en/post/filler-6.json')).toBe(false);
    const archived = await archivedPaths(ctx);
    expect(archived.length).toBe(final.size);
    expect(new Set(archived)).toEqual(new Set(final.keys()));
    expect(await page('en/post/filler-6/index.html')).toBeUndefined();
  });
});
