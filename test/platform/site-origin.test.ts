import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { siteOrigin } from '../../services/tenancy/site-origin.ts';
import { startWorld, type World } from '../support/world.ts';
import { multipartBody, pdfOfSize } from '../media/support.ts';
import { caller, createTenant, keyOnHost, operatorKey, type Call } from './support.ts';
import { createSiteResolver } from '../../services/tenancy/site-resolver.ts';
import { readExportFile } from '../../services/export/files.ts';
import { eventually } from '../support/polling.ts';

describe('site origin rule for media and page links', () => {
  const site = { domains: ['blog.example.test', 'www.blog.example.test'] };
  it('takes scheme and port from PUBLIC_BASE_URL, the host from the site', () => {
    expect(siteOrigin({ PUBLIC_BASE_URL: 'http://localhost:8080' }, site)).toBe('http://blog.example.test:8080');
    expect(siteOrigin({ PUBLIC_BASE_URL: 'https://cms.example.com' }, site)).toBe('https://blog.example.test');
    expect(siteOrigin({ PUBLIC_BASE_URL: 'https://cms.example.com:8443/' }, site)).toBe('https://blog.example.test:8443');
    expect(siteOrigin({ PUBLIC_BASE_URL: 'http://cms.example.com:80' }, site)).toBe('http://blog.example.test');
  });
  it('defaults to https on the default port behind a proxy, and to the base URL for a site without domain', () => {
    expect(siteOrigin({ PUBLIC_BASE_URL: undefined }, site)).toBe('https://blog.example.test');
    expect(siteOrigin({ PUBLIC_BASE_URL: 'http://localhost:8080/' }, { domains: [] })).toBe('http://localhost:8080');
    expect(siteOrigin({ PUBLIC_BASE_URL: undefined }, { domains: [] })).toBe('');
  });
});

/** End to end: a local setup on a non-standard port; media links and exported page links agree. */
describe('media and page links of a site follow the same rule', { timeout: 240_000 }, () => {
  let world: World;
  let call: Call;
  let key: string;
  const host = 'links.origin.example.test';
  const origin = `http://${host}:8080`;

  beforeAll(async () => {
    world = await startWorld({ worker: true, env: { PUBLIC_BASE_URL: 'http://localhost:8080', LIFECYCLE_WAIT_MS: '60000' } });
    const operator = await operatorKey(world);
    call = caller(world, () => operator);
    await createTenant(call, 'Links', host);
    key = await keyOnHost(world, host, [
      'content:read',
      'content:create',
      'content:update',
      'content:publish',
      'media:read',
      'media:upload',
      'settings:read',
      'settings:manage',
    ]);
  });
  afterAll(() => world?.close());

  it("media URLs, canonical links, sitemap, feed and robots.txt use the site host with PUBLIC_BASE_URL's scheme and port", async () => {
    const body = multipartBody('doc.pdf', pdfOfSize(300));
    const up = await world.app.inject({
      method: 'POST',
      url: '/api/manage/v1/media',
      payload: body.payload,
      headers: { authorization: `Bearer ${key}`, host, ...body.headers },
    });
    expect(up.statusCode).toBe(201);
    const media = up.json();
    expect(media.url).toBe(`${origin}/media/files/${media.id}/doc.pdf`);
    // The link works on that host (the port is the proxy's or the local one; the Host header carries it).
    expect((await world.app.inject({ url: new URL(media.url).pathname, headers: { host: `${host}:8080` } })).statusCode).toBe(200);

    const entry = (
      await call(
        'POST',
        '/content',
        { title: 'Linked page', slug: 'linked', blocks: { version: 1, blocks: [{ type: 'file', mediaId: media.id, name: 'doc' }] } },
        key,
        host,
      )
    ).json();
    expect((await call('POST', `/content/${entry.id}/publish`, undefined, key, host)).statusCode).toBe(200);
    const run = await call('POST', '/static-export/run', { mode: 'full' }, key, host);
    expect(run.statusCode).toBe(202);
    const finished = await eventually(
      async () => {
        const s = (await call('GET', '/static-export', undefined, key, host)).json();
        return s.status === 'idle' && s.lastRun?.requestIds.includes(run.json().requestId) && s;
      },
      'the export run to finish',
      180_000,
      200,
    );
    expect(finished.lastRun.status).toBe('succeeded');
    const scope = (await createSiteResolver(world.services).resolve(host))!;
    const db = world.services.workspaceDb(scope.workspace);
    const file = async (path: string) => (await readExportFile(db, scope.site._id, path))!.body.toString('utf8');
    const page = await file('en/post/linked/index.html');
    expect(page).toContain(`<link rel="canonical" href="${origin}/en/post/linked/">`);
    expect(page).toContain(`${origin}/media/files/${media.id}`);
    expect(await file('sitemap.xml')).toContain(`<loc>${origin}/en/post/linked/</loc>`);
    expect(await file('robots.txt')).toContain(`Sitemap: ${origin}/sitemap.xml`);
    // No link of the site escapes the rule (no https://host without the port).
    for (const text of [page, await file('sitemap.xml')]) expect(text).not.toContain(`https://${host}`);
  });
});
