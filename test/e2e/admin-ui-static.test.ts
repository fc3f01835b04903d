import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';

const PAGES = [
  '/admin',
  '/admin/api-keys',
  '/admin/webhooks',
  '/admin/exports',
  '/admin/platform',
  '/admin/users',
  '/admin/account',
  '/admin/accept-invitation',
  '/admin/reset-password',
  '/admin/media',
  '/admin/menus',
  '/admin/redirects',
  '/admin/roles',
  '/admin/taxonomies',
  '/admin/comments',
  '/admin/types',
  '/admin/languages',
  '/admin/settings',
  '/admin/email-templates',
  '/admin/content',
  '/admin/entry',
  '/admin/trash',
];

describe('admin UI: pages and assets as served', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(() => world?.close());

  const get = (url: string, headers: Record<string, string> = {}) => world.app.inject({ method: 'GET', url, headers });

  it('serves each page as HTML under a strict CSP, with no inline script, handler or style', async () => {
    for (const page of PAGES) {
      const response = await get(page);
      expect(response.statusCode, page).toBe(200);
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      const csp = String(response.headers['content-security-policy']);
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).not.toContain('unsafe-eval');
      expect(response.headers['x-frame-options']).toBe('DENY');
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      const html = response.body;
      // Every <script> has a src; no event-handler attributes; no style attributes or blocks.
      for (const tag of html.match(/<script\b[^>]*>/g) ?? []) expect(tag).toMatch(/\ssrc="\/admin\/assets\/[a-z-]+\.js"/);
      expect(html).not.toMatch(/<script\b[^>]*>\s*[^<\s]/);
      expect(html).not.toMatch(/\son[a-z]+=/i);
      expect(html).not.toMatch(/\sstyle=|<style/i);
    }
  });

  it('serves every asset a page references, with its content type', async () => {
    const referenced = new Set<string>();
    for (const page of PAGES) {
      for (const [, url] of (await get(page)).body.matchAll(/(?:src|href)="(\/admin\/assets\/[^"]+)"/g)) referenced.add(url);
    }
    referenced.add('/admin/assets/common.js'); // imported by the page modules
    expect(referenced.size).toBeGreaterThanOrEqual(5);
    for (const url of referenced) {
      const response = await get(url);
      expect(response.statusCode, url).toBe(200);
      expect(response.headers['content-type']).toBe(url.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8');
      expect(response.headers['content-security-policy']).toContain("default-src 'self'");
    }
  });

  it('never builds markup from strings in the page scripts', async () => {
    for (const file of [
      'common.js',
      'index.js',
      'api-keys.js',
      'webhooks.js',
      'exports.js',
      'users.js',
      'account.js',
      'accept-invitation.js',
      'reset-password.js',
      'content-common.js',
      'content.js',
      'entry.js',
      'entry-blocks.js',
      'entry-diff.js',
      'entry-revisions.js',
      'trash.js',
    ]) {
      const source = (await get(`/admin/assets/${file}`)).body;
      expect(source, file).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(/);
    }
  });

  it('answers an unknown or traversing asset name with 404 { error }', async () => {
    for (const url of ['/admin/assets/nope.js', '/admin/assets/..%2Fapi-keys.html', '/admin/assets/%2e%2e%2f%2e%2e%2fruntime.ts', '/admin/assets/index.html']) {
      const response = await get(url);
      expect(response.statusCode, url).toBe(404);
      expect(response.json()).toEqual({ error: expect.any(String) });
    }
  });

  it('answers a matching If-None-Match with 304 and redirects /admin/ to /admin', async () => {
    const first = await get('/admin/assets/common.js');
    const etag = String(first.headers.etag);
    expect(etag).toMatch(/^".+"$/);
    expect(first.headers['cache-control']).toBe('no-cache');
    const again = await get('/admin/assets/common.js', { 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    const slash = await get('/admin/');
    expect(slash.statusCode).toBe(308);
    expect(slash.headers.location).toBe('/admin');
  });

  it('answers an unknown host with 404 { error }', async () => {
    const response = await get('/admin', { host: 'unknown.example' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ error: expect.any(String) });
  });
});
