import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { createApiKey, signIn } from '../support/access.ts';
import { freshWindow } from '../access/world-helpers.ts';
import { multipartBody, pdfOfSize } from '../media/support.ts';
import { caller, createTenant, keyOnHost, operatorKey, tenantAdmin, type Call } from './support.ts';

/** Quotas set through the API, then enforced end to end (docs/platform.md). */
describe('platform quotas', () => {
  let world: World;
  let operator: string;
  let call: Call;
  let siteId: string;
  const tenantId = () => world.defaultWorkspace.id;
  const setSite = (quotas: Record<string, unknown>) => call('PUT', `/sites/${siteId}/quotas`, { quotas });
  const setTenant = (quotas: Record<string, unknown>, id = tenantId()) => call('PUT', `/tenants/${id}/quotas`, { quotas });
  const usage = async (path: string) => (await call('GET', path)).json();
  const codes = (responses: { statusCode: number }[]) => responses.map((r) => r.statusCode).sort();

  beforeAll(async () => {
    world = await startWorld({ worker: true, env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    operator = await operatorKey(world);
    call = caller(world, () => operator);
    siteId = (await call('GET', `/tenants/${tenantId()}`)).json().sites[0].id;
  });
  afterAll(() => world?.close());

  it('refuses unknown names, bad values and workspace-only limits on a site (400), changing nothing', async () => {
    expect((await setSite({ entries: 100, comments: true })).statusCode).toBe(200);
    for (const bad of [
      { entriez: 1 },
      { entries: -1 },
      { entries: 1.5 },
      { graphql: 'no' },
      { mediaTypes: ['not a type'] },
      { sites: 2 },
      { requestsPerMinute: 10 },
    ]) {
      const res = await setSite(bad);
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(res.json().error).toBeTruthy();
    }
    expect((await setTenant({ nope: true })).statusCode).toBe(400);
    expect((await call('GET', `/sites/${siteId}/quotas`)).json().quotas).toEqual({ entries: 100, comments: true });
    expect((await setSite({})).statusCode).toBe(200);
  });

  it('entries: 20 parallel creates at limit − 1 give exactly one success, site then workspace level', async () => {
    const existing = (await usage(`/sites/${siteId}/usage`)).quotas.entries.used as number;
    const limit = existing + 3;
    expect((await setSite({ entries: limit })).statusCode).toBe(200);
    for (let i = 0; i < 2; i++) expect((await call('POST', '/content', { title: `Filler ${i}` })).statusCode).toBe(201);
    const race = await Promise.all(Array.from({ length: 20 }, (_, i) => call('POST', '/content', { title: `Race ${i}` })));
    expect(codes(race)).toEqual([201, ...Array(19).fill(403)]);
    expect(race.find((r) => r.statusCode === 403)!.json()).toEqual({ error: 'Quota exceeded: entries' });
    const site = await usage(`/sites/${siteId}/usage`);
    expect(site.quotas.entries).toEqual({ used: limit, limit });

    // The workspace limit applies when the site sets none.
    await setSite({});
    await setTenant({ entries: limit + 1 });
    const again = await Promise.all(Array.from({ length: 20 }, (_, i) => call('POST', '/content', { title: `Ws race ${i}` })));
    expect(codes(again)).toEqual([201, ...Array(19).fill(403)]);
    expect((await usage(`/tenants/${tenantId()}/usage`)).quotas.entries).toEqual({ used: limit + 1, limit: limit + 1 });
    await setTenant({});
    expect((await call('POST', '/content', { title: 'Free again' })).statusCode).toBe(201);
  });

  it('users, API keys and webhook endpoints: exact under races', async () => {
    const before = (await usage(`/sites/${siteId}/usage`)).quotas;
    await setSite({ users: before.users.used + 1, apiKeys: before.apiKeys.used + 1, webhookEndpoints: before.webhookEndpoints.used + 1 });

    const users = await Promise.all(
      Array.from({ length: 10 }, (_, i) => call('POST', '/users', { email: `race${i}@example.test`, password: 'long enough password', role: 'viewer' })),
    );
    expect(codes(users)).toEqual([201, ...Array(9).fill(403)]);
    expect(users.find((r) => r.statusCode === 403)!.json().error).toBe('Quota exceeded: users');

    const session = await signIn(world);
    const keys = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        world.app.inject({
          method: 'POST',
          url: '/api/api-keys',
          headers: { cookie: session.cookie, origin: session.origin },
          payload: { name: `k${i}`, capabilities: ['content:read'] },
        }),
      ),
    );
    expect(codes(keys)).toEqual([201, ...Array(9).fill(403)]);
    expect(keys.find((r) => r.statusCode === 403)!.json().error).toBe('Quota exceeded: apiKeys');

    const hooks = await Promise.all(
      Array.from({ length: 10 }, (_, i) => call('POST', '/webhooks', { name: `h${i}`, url: `http://127.0.0.1:9/hook${i}`, events: ['content.created'] })),
    );
    expect(codes(hooks)).toEqual([201, ...Array(9).fill(403)]);
    expect(hooks.find((r) => r.statusCode === 403)!.json().error).toBe('Quota exceeded: webhookEndpoints');

    const after = (await usage(`/sites/${siteId}/usage`)).quotas;
    for (const name of ['users', 'apiKeys', 'webhookEndpoints']) expect(after[name]).toEqual({ used: before[name].used + 1, limit: before[name].used + 1 });
    await setSite({});
  });

  it('sites: a workspace at its limit cannot add a site, and nothing is claimed', async () => {
    const t = await createTenant(call, 'Sited', 'sited.example.test');
    expect((await setTenant({ sites: 2 }, t.tenantId)).statusCode).toBe(200);
    const add = (n: number) => call('POST', `/tenants/${t.tenantId}/sites`, { name: `s${n}`, domains: [`s${n}.sited.example.test`], admin: tenantAdmin });
    const results = await Promise.all([add(1), add(2), add(3), add(4)]);
    expect(codes(results)).toEqual([201, 403, 403, 403]);
    expect(results.find((r) => r.statusCode === 403)!.json().error).toBe('Quota exceeded: sites');
    expect((await call('GET', `/tenants/${t.tenantId}`)).json().sites.length).toBe(2);
    expect((await usage(`/tenants/${t.tenantId}/usage`)).quotas.sites).toEqual({ used: 2, limit: 2 });
  });

  it('requestsPerMinute: keys and the public API of a workspace share one budget; 429 with Retry-After', async () => {
    const t = await createTenant(call, 'Metered', 'metered.example.test');
    const key = await keyOnHost(world, t.host, ['content:read']);
    await freshWindow(20);
    expect((await setTenant({ requestsPerMinute: 6 }, t.tenantId)).statusCode).toBe(200);
    const manage = () => call('GET', '/content', undefined, key, t.host);
    const pub = () => world.app.inject({ url: '/api/v1/content', headers: { host: t.host } });
    const answers = [await manage(), await pub(), await manage(), await pub(), await manage(), await pub()];
    expect(answers.map((r) => r.statusCode).filter((c) => c === 429)).toEqual([]);
    for (const over of [await manage(), await pub()]) {
      expect(over.statusCode).toBe(429);
      expect(over.json()).toEqual({ error: 'Quota exceeded: requestsPerMinute' });
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    }
    // Another workspace is not affected.
    expect((await call('GET', '/content')).statusCode).toBe(200);
    expect((await usage(`/tenants/${t.tenantId}/usage`)).quotas.requestsPerMinute).toEqual({ used: 6, limit: 6 });
    await setTenant({}, t.tenantId);
    expect((await manage()).statusCode).toBe(200);
  });

  it('exportRunsPerDay: the run over the limit is a 429 with Retry-After', async () => {
    await setSite({ exportRunsPerDay: 1 });
    const { key } = await createApiKey(world, { capabilities: ['settings:manage', 'settings:read'] });
    expect((await call('POST', '/static-export/run', { mode: 'full' }, key)).statusCode).toBe(202);
    const over = await call('POST', '/static-export/run', { mode: 'full' }, key);
    expect(over.statusCode).toBe(429);
    expect(over.json()).toEqual({ error: 'Quota exceeded: exportRunsPerDay' });
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    expect((await usage(`/sites/${siteId}/usage`)).quotas.exportRunsPerDay).toEqual({ used: 1, limit: 1 });
    await setSite({});
  });

  it('mediaFileSize (413), mediaBytes (413) and mediaTypes, set through the API', async () => {
    const { key } = await createApiKey(world, { capabilities: ['media:read', 'media:upload'] });
    const send = (content: Buffer, name = 'a.pdf') => {
      const body = multipartBody(name, content);
      return world.app.inject({
        method: 'POST',
        url: '/api/manage/v1/media',
        payload: body.payload,
        headers: { authorization: `Bearer ${key}`, ...body.headers },
      });
    };
    await setSite({ mediaFileSize: 2000 });
    const big = await send(pdfOfSize(2001));
    expect(big.statusCode).toBe(413);
    expect(big.json().error).toMatch(/^Quota exceeded: mediaFileSize/);
    expect((await send(pdfOfSize(2000))).statusCode).toBe(201);

    const used = (await usage(`/sites/${siteId}/usage`)).quotas.mediaBytes.used as number;
    await setSite({ mediaBytes: used + 1500 });
    const full = await send(pdfOfSize(1501));
    expect(full.statusCode).toBe(413);
    expect(full.json().error).toMatch(/^Quota exceeded: mediaBytes/);

    await setSite({ mediaTypes: ['image/*'] });
    const pdf = await send(pdfOfSize(100));
    expect(pdf.statusCode).toBe(400);
    expect(pdf.json().error).toMatch(/mediaTypes/);
    expect((await usage(`/sites/${siteId}/usage`)).mediaTypes).toEqual(['image/*']);
    await setSite({});
  });
});
