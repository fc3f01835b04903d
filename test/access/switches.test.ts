import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { createApiKey, signIn } from '../support/access.ts';
import { createRuntime } from '../../services/runtime.ts';
import { closeServices } from '../../services/core/services.ts';
import { featuresWithProbe } from './probe-feature.ts';
import { bearer } from './world-helpers.ts';
import { multipartBody, pdfOfSize } from '../media/support.ts';
import type { FastifyInstance, InjectOptions } from 'fastify';

let world: World;
let second: { app: FastifyInstance; close(): Promise<void> };
let admin: { cookie: string; origin: string };

beforeAll(async () => {
  world = await startWorld({ features: featuresWithProbe });
  // A second gateway on the same databases: its own process-level caches, nothing shared in memory.
  const runtime = await createRuntime(world.config, { features: featuresWithProbe });
  await runtime.services.changeFeed.start();
  expect(runtime.services.changeFeed.trusted()).toBe(true);
  const app = await runtime.buildApp({ logger: false });
  await app.ready();
  second = {
    app,
    close: async () => {
      await app.close();
      await closeServices(runtime.services);
    },
  };
  admin = await signIn(world);
});
afterAll(async () => {
  await second?.close();
  await world?.close();
});

const both = async (request: InjectOptions) => [await world.app.inject(request), await second.app.inject(request)];

describe('Management API switch', () => {
  it('is off by default: a fresh key is refused with a generic 403', async () => {
    const res = await world.app.inject({ method: 'GET', url: '/api/api-keys/settings', headers: { cookie: admin.cookie } });
    expect(res.json()).toEqual({ enabled: false, defaultRateLimitPerMin: 120, allowedOrigins: [] });
  });

  it('flips on every gateway on the next request, without restart', async () => {
    const { key } = await createApiKey(world, { capabilities: ['content:read'] });
    for (const res of await both({ method: 'GET', url: '/api/manage/v1/probe', headers: bearer(key) })) expect(res.statusCode).toBe(200);

    const off = await world.app.inject({
      method: 'PUT',
      url: '/api/api-keys/settings',
      headers: { cookie: admin.cookie, origin: admin.origin },
      payload: { enabled: false },
    });
    expect(off.statusCode).toBe(200);
    for (const res of await both({ method: 'GET', url: '/api/manage/v1/probe', headers: bearer(key) })) {
      expect(res.statusCode).toBe(403);
      expect(res.body).toBe('{"error":"Forbidden"}');
    }
    // Off means off for everybody: an unknown key gets the very same answer.
    const unknown = await second.app.inject({ method: 'GET', url: '/api/manage/v1/probe', headers: bearer(`svk_${'q'.repeat(55)}`) });
    expect(unknown.statusCode).toBe(403);
    expect(unknown.body).toBe('{"error":"Forbidden"}');
    // openapi.json stays readable.
    expect((await second.app.inject({ method: 'GET', url: '/api/manage/v1/openapi.json' })).statusCode).toBe(200);

    const on = await second.app.inject({
      method: 'PUT',
      url: '/api/api-keys/settings',
      headers: { cookie: admin.cookie, origin: admin.origin },
      payload: { enabled: true, defaultRateLimitPerMin: 100000 },
    });
    expect(on.statusCode).toBe(200);
    for (const res of await both({ method: 'GET', url: '/api/manage/v1/probe', headers: bearer(key) })) expect(res.statusCode).toBe(200);
  });

  it('rejects invalid key settings with 400 and keeps the old ones', async () => {
    const bad = await world.app.inject({
      method: 'PUT',
      url: '/api/api-keys/settings',
      headers: { cookie: admin.cookie, origin: admin.origin },
      payload: { enabled: 'yes' },
    });
    expect(bad.statusCode).toBe(400);
    const now = await world.app.inject({ method: 'GET', url: '/api/api-keys/settings', headers: { cookie: admin.cookie } });
    expect(now.json().enabled).toBe(true);
  });
});

describe('revocation and role changes across gateways', () => {
  it('a key revoked through one gateway is refused by the other on its next request', async () => {
    const { key, id } = await createApiKey(world, { capabilities: ['content:read'] });
    for (const res of await both({ method: 'GET', url: '/api/manage/v1/probe', headers: bearer(key) })) expect(res.statusCode).toBe(200);
    const revoked = await world.app.inject({ method: 'POST', url: `/api/api-keys/${id}/revoke`, headers: { cookie: admin.cookie, origin: admin.origin } });
    expect(revoked.statusCode).toBe(200);
    for (const res of await both({ method: 'GET', url: '/api/manage/v1/probe', headers: bearer(key) })) expect(res.statusCode).toBe(401);
  });
});

describe('Public API switch', () => {
  it('lives in the site settings and flips every gateway on the next request', async () => {
    const { key } = await createApiKey(world, { capabilities: ['settings:manage', 'settings:read'] });
    for (const res of await both({ method: 'GET', url: '/api/v1/probe-same' })) expect(res.statusCode).toBe(200);
    const off = await world.app.inject({ method: 'PATCH', url: '/api/manage/v1/settings', headers: bearer(key), payload: { api: { publicEnabled: false } } });
    expect(off.statusCode).toBe(200);
    expect(off.json().api.publicEnabled).toBe(false);
    for (const res of await both({ method: 'GET', url: '/api/v1/probe-same' })) {
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'Not found' });
    }
    // The admin session's settings route flips it back.
    const on = await second.app.inject({
      method: 'PATCH',
      url: '/api/settings',
      headers: { cookie: admin.cookie, origin: admin.origin },
      payload: { api: { publicEnabled: true } },
    });
    expect(on.statusCode).toBe(200);
    for (const res of await both({ method: 'GET', url: '/api/v1/probe-same' })) expect(res.statusCode).toBe(200);
  });

  it('also closes what the site publishes outside /api/v1: media files and the export preview, signed in or not', async () => {
    const { key } = await createApiKey(world, { capabilities: ['settings:manage', 'media:upload'] });
    const body = multipartBody('notes.pdf', pdfOfSize(2000), 'application/pdf');
    const uploaded = await world.app.inject({
      method: 'POST',
      url: '/api/manage/v1/media',
      payload: body.payload,
      headers: { ...bearer(key), ...body.headers },
    });
    expect(uploaded.statusCode).toBe(201);
    const file = `/media/files/${uploaded.json().id}`;
    const signedIn = { cookie: admin.cookie };
    for (const res of await both({ method: 'GET', url: file })) expect(res.statusCode).toBe(200);
    for (const res of await both({ method: 'GET', url: '/static-preview' })) expect(res.statusCode).toBe(301);

    expect(
      (await world.app.inject({ method: 'PATCH', url: '/api/manage/v1/settings', headers: bearer(key), payload: { api: { publicEnabled: false } } }))
        .statusCode,
    ).toBe(200);
    for (const request of [
      { method: 'GET', url: file },
      { method: 'HEAD', url: file },
      { method: 'GET', url: `${file}/notes.pdf` },
      { method: 'GET', url: file, headers: signedIn },
      { method: 'GET', url: '/static-preview' },
      { method: 'GET', url: '/static-preview/' },
      { method: 'GET', url: '/static-preview/en/index.html', headers: signedIn },
    ] as InjectOptions[]) {
      for (const res of await both(request)) {
        expect(res.statusCode, `${request.method} ${request.url}`).toBe(404);
        if (request.method === 'GET') expect(res.json()).toEqual({ error: 'Not found' });
      }
    }

    expect(
      (await world.app.inject({ method: 'PATCH', url: '/api/manage/v1/settings', headers: bearer(key), payload: { api: { publicEnabled: true } } })).statusCode,
    ).toBe(200);
    for (const res of await both({ method: 'GET', url: file })) expect(res.statusCode).toBe(200);
  });
});
