import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { createApiKey } from '../support/access.ts';
import { ALL_CAPABILITIES } from '../../services/core/capabilities.ts';

describe('workspaces on the Management API (platform operators)', () => {
  let world: World;
  let operator: string;
  const call = (method: string, url: string, payload?: unknown, key = operator) =>
    world.app.inject({ method: method as never, url: `/api/manage/v1${url}`, headers: { authorization: `Bearer ${key}` }, payload: payload as never });
  const admin = { email: 'owner@acme.example.test', password: 'correct horse battery staple' };

  beforeAll(async () => {
    // The routes wait for the end state (a busy machine's worker may need more than the default 5 s).
    world = await startWorld({ worker: true, env: { LIFECYCLE_WAIT_MS: '60000' } });
    // It creates an administrator below: a grant never exceeds its granter, so the key holds every capability.
    operator = (await createApiKey(world, { capabilities: [...ALL_CAPABILITIES] })).key;
  });
  afterAll(() => world?.close());

  it('creates a workspace whose host then resolves to its own site, and adds a second site', async () => {
    const created = await call('POST', '/tenants', { name: 'Acme', domains: ['acme.example.test'], admin });
    expect(created.statusCode).toBe(202);
    const { tenant } = created.json();
    expect(tenant.status).toBe('active');
    const hosted = await world.app.inject({ url: '/api/v1/openapi.json', headers: { host: 'acme.example.test' } });
    expect(hosted.statusCode).toBe(200);

    const site = await call('POST', `/tenants/${tenant.id}/sites`, { name: 'Acme blog', domains: ['blog.acme.example.test'], admin });
    expect(site.statusCode).toBe(201);
    const detail = (await call('GET', `/tenants/${tenant.id}`)).json();
    expect(detail.sites.map((s: { domains: string[] }) => s.domains[0]).sort()).toEqual(['acme.example.test', 'blog.acme.example.test']);
  });

  it('refuses invalid input and a taken domain, creating nothing', async () => {
    const before = (await call('GET', '/tenants')).json().data.length;
    const bad = await call('POST', '/tenants', { name: 'X', domains: ['not a host'], admin });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatch(/^domains/);
    const weak = await call('POST', '/tenants', { name: 'X', domains: ['x.example.test'], admin: { ...admin, password: 'short' } });
    expect(weak.statusCode).toBe(400);
    const taken = await call('POST', '/tenants', { name: 'Copy', domains: ['acme.example.test'], admin });
    expect(taken.statusCode).toBe(409);
    expect((await call('GET', '/tenants')).json().data.length).toBe(before);
  });

  it('suspends and reactivates: a suspended workspace answers 404 on its hosts', async () => {
    const created = (await call('POST', '/tenants', { name: 'Pause', domains: ['pause.example.test'], admin })).json();
    const hostGet = () => world.app.inject({ url: '/api/v1/openapi.json', headers: { host: 'pause.example.test' } });
    expect((await hostGet()).statusCode).toBe(200);
    expect((await call('POST', `/tenants/${created.tenant.id}/suspend`)).json().tenant.status).toBe('suspended');
    expect((await hostGet()).statusCode).toBe(404);
    // A repeated call is harmless.
    const again = await call('POST', `/tenants/${created.tenant.id}/suspend`);
    expect(again.statusCode).toBe(202);
    expect(again.json().tenant.status).toBe('suspended');
    expect((await call('POST', `/tenants/${created.tenant.id}/reactivate`)).json().tenant.status).toBe('active');
    expect((await hostGet()).statusCode).toBe(200);
  });

  it('reads and replaces quotas, refusing bad values without changing them', async () => {
    const { tenant, site } = (await call('POST', '/tenants', { name: 'Quota', domains: ['quota.example.test'], admin })).json();
    const put = await call('PUT', `/sites/${site.id}/quotas`, { quotas: { mediaBytes: 1000, comments: false, mediaFileSize: null } });
    expect(put.statusCode).toBe(200);
    const bad = await call('PUT', `/sites/${site.id}/quotas`, { quotas: { mediaBytes: -1 } });
    expect(bad.statusCode).toBe(400);
    expect((await call('GET', `/sites/${site.id}/quotas`)).json().quotas).toEqual({ mediaBytes: 1000, comments: false, mediaFileSize: null });
    expect((await call('PUT', `/tenants/${tenant.id}/quotas`, { quotas: {} })).statusCode).toBe(200);
    expect((await call('GET', '/tenants/nope/quotas')).statusCode).toBe(404);
  });

  it('deletes a workspace through its workflow: domains released, database dropped', async () => {
    const { tenant } = (await call('POST', '/tenants', { name: 'Gone', domains: ['gone.example.test'], admin })).json();
    const dbName = `${world.config.DB_PREFIX}ws_${tenant.id}`;
    const listDbs = async () => (await world.services.mongo.db('admin').admin().listDatabases({ nameOnly: true })).databases.map((d) => d.name);
    expect(await listDbs()).toContain(dbName);

    const deleted = await call('DELETE', `/tenants/${tenant.id}?dropDatabase=true`);
    expect(deleted.statusCode).toBe(202);
    expect(deleted.json().tenant).toMatchObject({ status: 'deleted', databaseDropped: true });
    expect(await listDbs()).not.toContain(dbName);
    expect((await world.app.inject({ url: '/api/v1/openapi.json', headers: { host: 'gone.example.test' } })).statusCode).toBe(404);
    const repeated = await call('DELETE', `/tenants/${tenant.id}`);
    expect(repeated.statusCode).toBe(202);
    expect(repeated.json().tenant.status).toBe('deleted');
    expect((await call('DELETE', '/tenants/no-such-workspace')).statusCode).toBe(404);
    // The released domain can be claimed again.
    expect((await call('POST', '/tenants', { name: 'Again', domains: ['gone.example.test'], admin })).statusCode).toBe(202);
  });

  it('never lets a workspace delete or suspend itself', async () => {
    expect((await call('DELETE', `/tenants/${world.defaultWorkspace.id}`)).statusCode).toBe(409);
    expect((await call('POST', `/tenants/${world.defaultWorkspace.id}/suspend`)).statusCode).toBe(409);
  });

  it('is refused (403) to a key whose user is not a platform operator, with nothing created', async () => {
    const created = await call('POST', '/users', { email: 'editor@example.test', password: 'correct horse battery staple', role: 'administrator' });
    expect(created.statusCode).toBe(201);
    const { key } = await createApiKey(world, { capabilities: ['users:read'], ownerEmail: 'editor@example.test' });
    const before = (await call('GET', '/tenants')).json().data.length;
    const denied = await call('POST', '/tenants', { name: 'Nope', domains: ['nope.example.test'], admin }, key);
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toEqual({ error: 'Forbidden' });
    expect((await call('GET', '/tenants', undefined, key)).statusCode).toBe(403);
    expect((await call('GET', '/tenants')).json().data.length).toBe(before);
  });
});
