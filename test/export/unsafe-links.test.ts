import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPluginWorld, type PluginWorld } from '../plugins/support.ts';
import type { OperationContext } from '../../services/core/context.ts';
import { contentCollections } from '../../services/content/model.ts';
import { menusCollection } from '../../services/menus/menus.ts';
import { widgetsCollection } from '../../services/design/widgets.ts';
import { readExportFile } from '../../services/export/files.ts';
import { call, liveFiles, runToEnd } from './support.ts';

/**
 * Strings that a naive `^javascript:` check lets through but a browser reads as a script (or
 * document) URL: it strips leading/trailing C0 controls and spaces, removes tabs and newlines
 * anywhere, and compares schemes case-insensitively (WHATWG URL parser).
 */
const BYPASSES = [
  'javascript:alert(1)',
  'java\tscript:alert(1)',
  '\u0001javascript:alert(1)',
  'JaVaScRiPt:alert(1)',
  '\njavascript:alert(1)',
  ' javascript:alert(1)',
  'javas\r\ncript:alert(1)',
  '\u0000\u001f javascript:alert(1) \u0000',
  'vbscript:msgbox(1)',
  'data:text/html,<script>alert(1)</script>',
  'DATA:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
];
const ALLOWED = new Set(['http:', 'https:', 'mailto:', 'tel:']);

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", Tab: '\t', NewLine: '\n' };
const decode = (value: string) =>
  value.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (all, name: string) =>
    name[0] === '#'
      ? String.fromCodePoint(name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10))
      : (ENTITIES[name] ?? all),
  );

/** Every tag of a page with its attributes, decoded as a browser would (a small HTML tokenizer). */
function tags(html: string): Array<{ name: string; attrs: Map<string, string> }> {
  const out: Array<{ name: string; attrs: Map<string, string> }> = [];
  const source = html.replace(/<!--[\s\S]*?-->/g, '');
  for (const tag of source.matchAll(/<([a-zA-Z][^\s/>]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*\/?>/g)) {
    const attrs = new Map<string, string>();
    for (const a of tag[2].matchAll(/([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g))
      attrs.set(a[1].toLowerCase(), decode(a[2] ?? a[3] ?? a[4] ?? ''));
    out.push({ name: tag[1].toLowerCase(), attrs });
  }
  return out;
}

/** The scheme a browser resolves a link to (Node's URL is the WHATWG parser), from the page's address. */
const schemeOf = (href: string) => new URL(href, 'https://static.example/en/post/x/').protocol;

/** Every URL-carrying attribute of a page, plus the target of a meta refresh. */
function linksOf(html: string): string[] {
  const found: string[] = [];
  for (const { name, attrs } of tags(html)) {
    for (const attr of ['href', 'src', 'action', 'formaction', 'poster', 'data', 'srcset', 'xlink:href', 'background']) {
      const value = attrs.get(attr);
      if (value !== undefined) found.push(value);
    }
    const refresh = name === 'meta' && attrs.get('http-equiv')?.toLowerCase() === 'refresh' ? /url=(.*)$/i.exec(attrs.get('content') ?? '') : null;
    if (refresh) found.push(refresh[1]);
  }
  return found;
}

/**
 * Output that cannot run script (issue 21, item 5): links are checked by one rule
 * (services/core/safe-url.ts) when the APIs accept them, and again when the export renders data
 * stored before the rule; every exported page carries a strict CSP and the export a `_headers`.
 */
describe('links that could run script', { timeout: 300_000 }, () => {
  let pw: PluginWorld;
  let key: string;
  let ctx: OperationContext;

  beforeAll(async () => {
    pw = await startPluginWorld({ worker: true });
    Object.assign(pw.world.services.exportTuning, { batchSize: 10, batchPauseMs: 0 });
    ctx = await pw.site();
    key = await pw.keyWith(['content:read', 'content:create', 'content:update', 'content:publish', 'settings:read', 'settings:manage']);
  }, 300_000);
  afterAll(async () => {
    await pw?.close();
  }, 120_000);

  it('the tokenizer and the oracle see what a browser sees', () => {
    expect(linksOf('<a class="x" href="java&#x09;script:alert(1)">x</a><img src=\'/m.png\'>')).toEqual(['java\tscript:alert(1)', '/m.png']);
    for (const bad of BYPASSES) expect(ALLOWED.has(schemeOf(bad)), JSON.stringify(bad)).toBe(false);
    for (const good of ['https://example.org/', '../about/', '#top', '?q=1', 'mailto:a@example.org', 'tel:+123'])
      expect(ALLOWED.has(schemeOf(good))).toBe(true);
  });

  it('the APIs refuse them on write: 400 naming the field, nothing stored', async () => {
    const entries = contentCollections(ctx.db).entries;
    const before = await entries.countDocuments({ siteId: ctx.site._id });
    const safe = await pw.manage('POST', '/content', key, { title: 'Safe', blocks: { version: 1, blocks: [{ type: 'paragraph', text: 'x' }] } });
    expect(safe.statusCode).toBe(201);
    const safeId = safe.json().id as string;
    const blocksOf = (url: string) => [
      { where: 'blocks.blocks.0.url', blocks: [{ type: 'button', text: 'Go', url }] },
      { where: 'blocks.blocks.0.url', blocks: [{ type: 'embed', url }] },
      { where: 'blocks.blocks.0.data.src', blocks: [{ type: 'file', data: { src: url } }] },
      {
        where: 'blocks.blocks.1.buttons.0.url',
        blocks: [
          { type: 'paragraph', text: 'a' },
          { type: 'buttons', buttons: [{ text: 'b', url }] },
        ],
      },
      { where: 'blocks.blocks.0.columns.0.blocks.0.url', blocks: [{ type: 'columns', columns: [{ blocks: [{ type: 'image', url }] }] }] },
    ];
    for (const bad of BYPASSES) {
      for (const { where, blocks } of blocksOf(bad)) {
        const created = await pw.manage('POST', '/content', key, { title: 'Evil', blocks: { version: 1, blocks } });
        expect(created.statusCode, JSON.stringify(bad)).toBe(400);
        expect(created.json().error).toMatch(new RegExp(`^${where.replace(/\./g, '\\.')}: must be an http, https, mailto or tel URL`));
        const updated = await pw.manage('PATCH', `/content/${safeId}`, key, { blocks: { version: 1, blocks } });
        expect(updated.statusCode).toBe(400);
      }
      const menu = await pw.manage('POST', '/menus', key, {
        slug: 'evil',
        name: 'Evil',
        items: [
          { label: 'ok', url: '/ok' },
          { label: 'x', url: bad },
        ],
      });
      expect(menu.statusCode, JSON.stringify(bad)).toBe(400);
      expect(menu.json().error).toMatch(/^items\.1\.url: must be/);
      const widget = await pw.manage('POST', '/widgets', key, { type: 'image', settings: { url: bad } });
      expect(widget.statusCode).toBe(400);
      expect(widget.json().error).toMatch(/^settings\.url: must be/);
      const reusable = await pw.manage('PUT', '/reusable-blocks', key, {
        items: [{ slug: 'evil', title: 'Evil', blocks: { version: 1, blocks: [{ type: 'button', url: bad }] } }],
      });
      expect(reusable.statusCode).toBe(400);
      expect(reusable.json().error).toMatch(/^items\.0\.blocks\.blocks\.0\.url: must be/);
      const part = await pw.manage('PUT', '/template-parts/evil', key, {
        area: 'footer',
        title: 'Evil',
        blocks: { version: 1, blocks: [{ type: 'embed', url: bad }] },
      });
      expect(part.statusCode).toBe(400);
    }
    expect(await entries.countDocuments({ siteId: ctx.site._id })).toBe(before + 1);
    expect((await entries.findOne({ _id: safeId }))!.blocks.blocks).toEqual([{ type: 'paragraph', text: 'x' }]);
    expect(await menusCollection(ctx).countDocuments({ siteId: ctx.site._id, slug: 'evil' })).toBe(0);
    expect(await widgetsCollection(ctx).countDocuments({ siteId: ctx.site._id })).toBe(0);
    expect((await pw.manage('GET', '/reusable-blocks', key)).json().data).toEqual([]);
    expect((await pw.manage('GET', '/template-parts/evil', key)).json().customized).not.toBe(true);

    // A content type's `url` field takes the same rule; safe links of every allowed kind pass.
    expect((await pw.manage('POST', '/content-types', key, { slug: 'link', label: 'Link', fields: [{ name: 'target', kind: 'url' }] })).statusCode).toBe(201);
    const field = await pw.manage('POST', '/content', key, { title: 'Evil field', type: 'link', fields: { target: 'JaVaScRiPt:alert(1)' } });
    expect(field.statusCode).toBe(400);
    expect(field.json().error).toMatch(/target/);
    const good = ['https://example.org/a?b=1&c=2', '/about', 'about', '#top', '?q=1', 'mailto:a@example.org', 'tel:+15550100', 'HTTPS://EXAMPLE.ORG'];
    const fine = await pw.manage('POST', '/content', key, {
      title: 'Fine',
      blocks: { version: 1, blocks: good.map((url) => ({ type: 'button', text: url, url })) },
    });
    expect(fine.statusCode).toBe(201);
    expect((await pw.manage('POST', '/menus', key, { slug: 'fine', name: 'Fine', items: good.map((url) => ({ label: url, url })) })).statusCode).toBe(201);
  });

  it('an export of data stored before the rule renders no executable link; every page has the CSP; _headers exists', async () => {
    const s = pw.world.services;
    const entries = contentCollections(ctx.db).entries;
    const created = await call<{ id: string }>(s, ctx, 'content.create', { title: 'Old data', slug: 'old-data' });
    await call(s, ctx, 'content.publish', { id: created.id });
    const blocks = BYPASSES.flatMap((url) => [
      { type: 'button', text: 'button', url },
      { type: 'buttons', buttons: [{ text: 'nested', url }] },
      { type: 'embed', url, title: 'embed' },
      { type: 'file', url, name: 'file' },
      { type: 'file', data: { src: url }, name: 'file' },
      { type: 'image', url, alt: 'image' },
      { type: 'video', src: url },
      { type: 'gallery', images: [{ url }] },
    ]);
    // Written straight to the database, as data saved before the rule would be.
    await entries.updateOne({ _id: created.id }, { $set: { 'blocks.blocks': blocks, 'live.blocks.blocks': blocks } });
    await call(s, ctx, 'menus.create', { slug: 'old', name: 'Old', location: 'primary', items: [{ label: 'placeholder', url: '/' }] });
    await menusCollection(ctx).updateOne(
      { siteId: ctx.site._id, slug: 'old' },
      { $set: { items: BYPASSES.map((url, i) => ({ label: `menu ${i}`, url, children: [{ label: `child ${i}`, url }] })) } },
    );
    await call(s, ctx, 'widgetAreas.create', { key: 'side', name: 'Side' });
    const widget = await call<{ id: string }>(s, ctx, 'widgets.create', { area: 'side', type: 'image', settings: { url: '/x.png' } });
    await widgetsCollection(ctx).updateOne({ _id: widget.id }, { $set: { 'settings.url': BYPASSES[1] } });

    // The public menu answer neutralises them too: no URL, the label stays.
    const menus = await pw.world.app.inject({ method: 'GET', url: '/api/v1/menus/old' });
    expect(menus.statusCode).toBe(200);
    const items = menus.json().menu.items as Array<{ url: string | null; label: string; children: Array<{ url: string | null }> }>;
    expect(items).toHaveLength(BYPASSES.length);
    expect(items.every((item) => item.url === null && item.children[0].url === null)).toBe(true);

    await runToEnd(pw, key, 'full');
    const paths = [...(await liveFiles(ctx)).keys()];
    expect(paths).toContain('_headers');
    const headers = (await readExportFile(ctx.db, ctx.site._id, '_headers'))!.body.toString('utf8');
    expect(headers).toMatch(/^\/\*\n {2}Content-Security-Policy: default-src 'none'; script-src 'none';[^\n]*\n {2}X-Content-Type-Options: nosniff\n$/);
    const policy = /Content-Security-Policy: ([^\n]+)/.exec(headers)![1];
    // No script source at all, so no 'unsafe-inline' or 'unsafe-eval' for scripts either.
    expect(policy.split('; ').filter((d) => /^(?:script-src|default-src)/.test(d))).toEqual(["default-src 'none'", "script-src 'none'"]);

    const html = paths.filter((p) => p.endsWith('.html'));
    expect(html.length).toBeGreaterThan(5);
    let links = 0;
    for (const path of html) {
      const body = (await readExportFile(ctx.db, ctx.site._id, path))!.body.toString('utf8');
      const metas = tags(body).filter((t) => t.name === 'meta' && t.attrs.get('http-equiv')?.toLowerCase() === 'content-security-policy');
      expect(metas, path).toHaveLength(1);
      const meta = metas[0].attrs.get('content')!;
      expect(meta).toContain("default-src 'none'");
      expect(meta).toContain("script-src 'none'");
      expect(policy.startsWith(meta)).toBe(true);
      expect(
        tags(body).some((t) => ['script', 'iframe', 'object', 'embed', 'base', 'form'].includes(t.name)),
        path,
      ).toBe(false);
      expect(
        tags(body).some((t) => [...t.attrs.keys()].some((a) => a.startsWith('on'))),
        path,
      ).toBe(false);
      for (const link of linksOf(body)) {
        links += 1;
        expect(ALLOWED.has(schemeOf(link)), `${path}: ${JSON.stringify(link)}`).toBe(true);
      }
    }
    expect(links).toBeGreaterThan(20);

    const page = (await readExportFile(ctx.db, ctx.site._id, 'en/post/old-data/index.html'))!.body.toString('utf8');
    // The refused links became text: a button without a link, menu labels without anchors.
    expect(page.match(/<span class="button">button<\/span>/g)).toHaveLength(BYPASSES.length);
    expect(page.match(/<span class="button">nested<\/span>/g)).toHaveLength(BYPASSES.length);
    expect(page).toContain('<li>menu 0<ul><li>child 0</li></ul></li>');
    expect(page).toContain('<section class="widget widget-image"></section>');

    // The preview serves the pages under the same policy, as a header.
    const preview = await pw.world.app.inject({ method: 'GET', url: '/static-preview/en/post/old-data/' });
    expect(preview.statusCode).toBe(200);
    expect(preview.headers['content-security-policy']).toBe(policy);
    // The preview follows the site's Public API switch, as the public API does.
    expect((await pw.manage('PATCH', '/settings', key, { api: { publicEnabled: false } })).statusCode).toBe(200);
    const closed = await pw.world.app.inject({ method: 'GET', url: '/static-preview/en/post/old-data/' });
    expect(closed.statusCode).toBe(404);
    expect(closed.json()).toEqual({ error: 'Not found' });
    expect((await pw.manage('PATCH', '/settings', key, { api: { publicEnabled: true } })).statusCode).toBe(200);
    expect((await pw.world.app.inject({ method: 'GET', url: '/static-preview/en/post/old-data/' })).statusCode).toBe(200);
  });
});
