import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { createApiKey } from '../support/access.ts';
import { bearer } from './world-helpers.ts';

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(async () => {
  await world?.close();
});

const call = (key: string, method: 'GET' | 'PATCH', url: string, payload?: unknown) =>
  world.app.inject({ method, url: `/api/manage/v1${url}`, headers: bearer(key), ...(payload !== undefined ? { payload: payload as object } : {}) });

describe('settings', () => {
  it('merges free-form patches; a settings:manage key sees the administrator view', async () => {
    const manager = (await createApiKey(world, { capabilities: ['settings:manage', 'settings:read'] })).key;
    const reader = (await createApiKey(world, { capabilities: ['settings:read'] })).key;
    const patched = await call(manager, 'PATCH', '/settings', { title: 'My site', seo: { robots: 'index' }, private: { smtpHost: 'mail.local' } });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ title: 'My site', seo: { robots: 'index' }, private: { smtpHost: 'mail.local' }, apiKeys: { enabled: true } });

    await call(manager, 'PATCH', '/settings', { seo: { twitter: '@x' }, title: null });
    const admin = (await call(manager, 'GET', '/settings')).json();
    expect(admin.seo).toEqual({ robots: 'index', twitter: '@x' });
    expect(admin.title).toBeUndefined();

    const readerView = (await call(reader, 'GET', '/settings')).json();
    expect(readerView.seo).toEqual({ robots: 'index', twitter: '@x' });
    expect(readerView.private).toBeUndefined();
    expect(readerView.apiKeys).toBeUndefined();
    expect(readerView.api).toEqual({ publicEnabled: true, commentsEnabled: true });
    expect((await call(reader, 'PATCH', '/settings', { title: 'nope' })).statusCode).toBe(403);
  });

  it('rejects invalid settings with 400 and changes nothing', async () => {
    const manager = (await createApiKey(world, { capabilities: ['settings:manage', 'settings:read'] })).key;
    const before = (await call(manager, 'GET', '/settings')).body;
    const deep = { a: { b: { c: { d: { e: { f: { g: { h: 1 } } } } } } } };
    for (const payload of [
      { $where: 1 },
      { 'a.b': 1 },
      { api: { publicEnabled: 'no' } },
      { api: { other: true } },
      deep,
      { title: 5 },
      {},
      { big: 'x'.repeat(70_000) },
    ]) {
      const res = await call(manager, 'PATCH', '/settings', payload);
      expect(res.statusCode, JSON.stringify(payload).slice(0, 80)).toBe(400);
      expect(typeof res.json().error).toBe('string');
    }
    expect((await call(manager, 'GET', '/settings')).body).toBe(before);
  });

  it('a patch that nests under a scalar setting is a 400, not a 500', async () => {
    const manager = (await createApiKey(world, { capabilities: ['settings:manage', 'settings:read'] })).key;
    expect((await call(manager, 'PATCH', '/settings', { footer: 'plain' })).statusCode).toBe(200);
    const res = await call(manager, 'PATCH', '/settings', { footer: { text: 'x' } });
    expect(res.statusCode).toBe(400);
    expect(typeof res.json().error).toBe('string');
    expect((await call(manager, 'GET', '/settings')).json().footer).toBe('plain');
  });
});

describe('health and diagnostics', () => {
  it('health answers any valid key with the database, Temporal and worker checks; no key is 401', async () => {
    const key = (await createApiKey(world, { capabilities: ['content:read'] })).key;
    const res = await call(key, 'GET', '/health');
    expect(res.statusCode).toBe(200);
    // This world runs no worker on its task queue: the engines are up but the service is degraded.
    expect(res.json()).toMatchObject({
      status: 'degraded',
      checks: { database: { status: 'ok' }, temporal: { status: 'ok' }, worker: { status: 'down', pollers: { workflow: 0, activity: 0 } } },
    });
    expect((await world.app.inject({ method: 'GET', url: '/api/manage/v1/health' })).statusCode).toBe(401);
  });

  it('diagnostics needs site:admin', async () => {
    const admin = (await createApiKey(world, { capabilities: ['site:admin'] })).key;
    const other = (await createApiKey(world, { capabilities: ['content:read'] })).key;
    const res = await call(admin, 'GET', '/diagnostics');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ version: expect.any(String), runtime: { node: process.version } });
    expect(res.json()).not.toHaveProperty('migrations');
    expect((await call(other, 'GET', '/diagnostics')).statusCode).toBe(403);
  });

  it('openapi.json needs no key and marks bearerAuth and capabilities', async () => {
    const doc = (await world.app.inject({ method: 'GET', url: '/api/manage/v1/openapi.json' })).json();
    expect(doc.paths['/users'].get['x-required-capability']).toBe('users:read');
    expect(doc.paths['/settings'].patch['x-required-capability']).toBe('settings:manage');
    expect(doc.components.securitySchemes.bearerAuth).toEqual({ type: 'http', scheme: 'bearer' });
  });
});
