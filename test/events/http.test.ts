import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/world.ts';
import { createApiKey, signIn } from '../support/access.ts';
import { siteDb, startWebhookWorld } from './support.ts';

const url = 'https://hooks.example.test/in';

describe('webhooks over HTTP (Management API keys, administrator session)', () => {
  let world: World;
  let keyA: string;
  let keyAId: string;
  let keyB: string;
  let weakKey: string;
  let hooksOnly: string;
  let admin: { cookie: string; origin: string };
  const asKey = (key: string) => ({ authorization: `Bearer ${key}` });
  const asAdmin = () => ({ cookie: admin.cookie, origin: admin.origin });

  beforeAll(async () => {
    world = await startWebhookWorld({
      env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' },
      webhooks: {
        resolve: async (host) => (host === 'internal.example.test' ? [{ address: '10.0.0.7', family: 4 }] : [{ address: '93.184.216.34', family: 4 }]),
      },
    });
    // Webhook keys hold the capabilities that read the events they subscribe to (docs/webhooks.md).
    const reads = ['content:read', 'media:read', 'users:read'] as const;
    ({ key: keyA, id: keyAId } = await createApiKey(world, { capabilities: ['settings:manage', ...reads], name: 'A' }));
    ({ key: keyB } = await createApiKey(world, { capabilities: ['settings:manage', ...reads], name: 'B' }));
    ({ key: hooksOnly } = await createApiKey(world, { capabilities: ['settings:manage'], name: 'hooks only' }));
    ({ key: weakKey } = await createApiKey(world, { capabilities: ['content:read'], name: 'weak' }));
    admin = await signIn(world);
  });
  afterAll(() => world?.close());

  it('GET /events answers any valid key with the catalog, and 401 without one', async () => {
    const ok = await world.app.inject({ method: 'GET', url: '/api/manage/v1/events', headers: asKey(weakKey) });
    expect(ok.statusCode).toBe(200);
    const { events } = ok.json();
    expect(events).toHaveLength(23);
    expect(events[0]).toEqual({ event: 'content.created', description: expect.any(String), data: expect.any(Object), requires: 'content:read' });
    expect(events.find((e: { event: string }) => e.event === 'user.deleted').requires).toBe('users:read');
    const anonymous = await world.app.inject({ method: 'GET', url: '/api/manage/v1/events' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toEqual({ error: expect.any(String) });
  });

  it('creates (201, secret once), refuses bad input with 400 and stores nothing', async () => {
    const created = await world.app.inject({
      method: 'POST',
      url: '/api/manage/v1/webhooks',
      headers: asKey(keyA),
      payload: { name: 'A1', url, events: ['content.published'] },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toEqual({ endpoint: { id: expect.any(String) }, secret: expect.stringMatching(/^whsec_/) });
    const { endpoints } = await siteDb(world);
    expect((await endpoints.findOne({ _id: created.json().endpoint.id }))?.ownerKeyId).toBe(keyAId);

    const before = await endpoints.countDocuments();
    for (const payload of [
      { name: 'bad', url: 'http://hooks.example.test/', events: ['content.published'] },
      { name: 'bad', url: 'https://internal.example.test/', events: ['content.published'] },
      { name: 'bad', url: 'https://[::1]/', events: ['content.published'] },
      { name: 'bad', url, events: ['no.such.event'] },
      { name: 'bad', url: 42, events: ['content.published'] },
    ]) {
      const response = await world.app.inject({ method: 'POST', url: '/api/manage/v1/webhooks', headers: asKey(keyA), payload });
      expect(response.statusCode, JSON.stringify(payload)).toBe(400);
      expect(response.json()).toEqual({ error: expect.any(String) });
    }
    expect(await endpoints.countDocuments()).toBe(before);

    const listed = await world.app.inject({ method: 'GET', url: '/api/manage/v1/webhooks', headers: asKey(keyA) });
    expect(listed.statusCode).toBe(200);
    expect(listed.body).not.toContain('whsec_');
    expect(listed.json().eventTypes).toContain('content.published');
  });

  it('refuses (403, nothing stored) a subscription to events the caller cannot read, on create and on update', async () => {
    const { endpoints } = await siteDb(world);
    const before = await endpoints.find().sort({ _id: 1 }).toArray();
    // settings:manage alone manages endpoints but reads no content, media or users.
    for (const events of [['content.published'], ['settings.updated', 'user.created'], ['media.uploaded']]) {
      const response = await world.app.inject({
        method: 'POST',
        url: '/api/manage/v1/webhooks',
        headers: asKey(hooksOnly),
        payload: { name: 'peek', url, events },
      });
      expect(response.statusCode, events.join()).toBe(403);
      expect(response.json()).toEqual({ error: 'Forbidden' });
    }
    expect(await endpoints.find().sort({ _id: 1 }).toArray()).toEqual(before);

    // What it can read is fine; widening it later is refused the same way, and the row is unchanged.
    const own = await world.app.inject({
      method: 'POST',
      url: '/api/manage/v1/webhooks',
      headers: asKey(hooksOnly),
      payload: { name: 'mine', url, events: ['settings.updated'] },
    });
    expect(own.statusCode).toBe(403); // settings.updated takes settings:read, which this key lacks too
    const { key: settingsKey } = await createApiKey(world, { capabilities: ['settings:manage', 'settings:read'], name: 'settings' });
    const created = await world.app.inject({
      method: 'POST',
      url: '/api/manage/v1/webhooks',
      headers: asKey(settingsKey),
      payload: { name: 'mine', url, events: ['settings.updated'] },
    });
    expect(created.statusCode).toBe(201);
    const id = created.json().endpoint.id;
    const stored = await endpoints.findOne({ _id: id });
    const widened = await world.app.inject({
      method: 'PUT',
      url: `/api/manage/v1/webhooks/${id}`,
      headers: asKey(settingsKey),
      payload: { events: ['settings.updated', 'user.updated'] },
    });
    expect(widened.statusCode).toBe(403);
    expect(await endpoints.findOne({ _id: id })).toEqual(stored);
  });

  it("a key cannot see, change or delete another key's or an administrator's endpoints", async () => {
    const ofB = (
      await world.app.inject({ method: 'POST', url: '/api/manage/v1/webhooks', headers: asKey(keyB), payload: { name: 'B1', url, events: ['media.uploaded'] } })
    ).json();
    const ofAdmin = await world.app.inject({
      method: 'POST',
      url: '/api/webhooks',
      headers: asAdmin(),
      payload: { name: 'Admin1', url, events: ['media.uploaded'] },
    });
    expect(ofAdmin.statusCode).toBe(201);
    const adminId = ofAdmin.json().endpoint.id;

    const seenByA = (await world.app.inject({ method: 'GET', url: '/api/manage/v1/webhooks?limit=200', headers: asKey(keyA) })).json();
    const idsA = seenByA.data.map((e: { id: string }) => e.id);
    expect(idsA).not.toContain(ofB.endpoint.id);
    expect(idsA).not.toContain(adminId);

    const { endpoints } = await siteDb(world);
    const snapshot = () =>
      endpoints
        .find({ _id: { $in: [ofB.endpoint.id, adminId] } })
        .sort({ _id: 1 })
        .toArray();
    const before = await snapshot();
    for (const id of [ofB.endpoint.id, adminId]) {
      for (const request of [
        { method: 'PUT' as const, url: `/api/manage/v1/webhooks/${id}`, payload: { name: 'stolen' } },
        { method: 'DELETE' as const, url: `/api/manage/v1/webhooks/${id}` },
        { method: 'POST' as const, url: `/api/manage/v1/webhooks/${id}/rotate-secret` },
      ]) {
        const response = await world.app.inject({ ...request, headers: asKey(keyA) });
        expect(response.statusCode, `${request.method} ${request.url}`).toBe(404);
        expect(response.json()).toEqual({ error: expect.any(String) });
      }
    }
    expect(await snapshot()).toEqual(before);

    // The administrator sees both and manages them.
    const all = (await world.app.inject({ method: 'GET', url: '/api/webhooks?limit=200', headers: asAdmin() })).json();
    expect(all.data.map((e: { id: string }) => e.id)).toEqual(expect.arrayContaining([ofB.endpoint.id, adminId]));
    const rotated = await world.app.inject({ method: 'POST', url: `/api/webhooks/${adminId}/rotate-secret`, headers: asAdmin() });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json().secret).toMatch(/^whsec_/);
    const updated = await world.app.inject({ method: 'PUT', url: `/api/webhooks/${ofB.endpoint.id}`, headers: asAdmin(), payload: { active: false } });
    expect(updated.json().endpoint).toMatchObject({ active: false });
    const removed = await world.app.inject({ method: 'DELETE', url: `/api/webhooks/${adminId}`, headers: asAdmin() });
    expect(removed.statusCode).toBe(200);
  });

  it('needs settings:manage on the Management API, and a session on /api/webhooks', async () => {
    const forbidden = await world.app.inject({ method: 'GET', url: '/api/manage/v1/webhooks', headers: asKey(weakKey) });
    expect(forbidden.statusCode).toBe(403);
    const noSession = await world.app.inject({ method: 'GET', url: '/api/webhooks' });
    expect(noSession.statusCode).toBe(401);
    // A key is not an administrator session.
    const keyOnAdmin = await world.app.inject({ method: 'GET', url: '/api/webhooks', headers: asKey(keyA) });
    expect(keyOnAdmin.statusCode).toBe(401);
  });

  it('serves the delivery history and refuses to redeliver an unknown delivery', async () => {
    const history = await world.app.inject({ method: 'GET', url: '/api/webhooks/deliveries/history', headers: asAdmin() });
    expect(history.statusCode).toBe(200);
    expect(history.json()).toEqual({ data: expect.any(Array) });
    const missing = await world.app.inject({ method: 'POST', url: '/api/webhooks/deliveries/nope/redeliver', headers: asAdmin() });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ error: expect.any(String) });
  });

  it("shows a paused endpoint on the admin list and resumes it; an unknown or another key's endpoint is 404 and unchanged", async () => {
    const created = await world.app.inject({
      method: 'POST',
      url: '/api/manage/v1/webhooks',
      headers: asKey(keyA),
      payload: { name: 'paused', url, events: ['user.created'], concurrency: 3, maxPerSecond: 10 },
    });
    const id = created.json().endpoint.id;
    const { endpoints } = await siteDb(world);
    const pausedAt = new Date();
    // As the circuit breaker leaves it (its own behaviour is covered in actors.test.ts).
    await endpoints.updateOne({ _id: id }, { $set: { pausedAt, pauseReason: 'every attempt failed for 30 min (last: HTTP 503)', failingSince: new Date(0) } });
    const listed = (await world.app.inject({ method: 'GET', url: '/api/webhooks', headers: asAdmin() })).json();
    expect(listed.data.find((e: { id: string }) => e.id === id)).toMatchObject({
      concurrency: 3,
      maxPerSecond: 10,
      pausedAt: pausedAt.toISOString(),
      pauseReason: expect.stringMatching(/HTTP 503/),
    });

    const refusals = [
      await world.app.inject({ method: 'POST', url: `/api/manage/v1/webhooks/${id}/resume`, headers: asKey(keyB) }), // another key's
      await world.app.inject({ method: 'POST', url: '/api/webhooks/nope/resume', headers: asAdmin() }), // unknown
    ];
    for (const refused of refusals) {
      expect(refused.statusCode).toBe(404);
      expect(refused.json()).toEqual({ error: expect.any(String) });
    }
    expect((await endpoints.findOne({ _id: id }))?.pausedAt).toEqual(pausedAt);
    const resumed = await world.app.inject({ method: 'POST', url: `/api/webhooks/${id}/resume`, headers: asAdmin() });
    expect(resumed.statusCode).toBe(200);
    expect(resumed.json().endpoint).toMatchObject({ id, pausedAt: null, pauseReason: null });
    expect((await endpoints.findOne({ _id: id }))?.failingSince).toBeNull();

    const bad = await world.app.inject({ method: 'PUT', url: `/api/webhooks/${id}`, headers: asAdmin(), payload: { concurrency: 100 } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatch(/concurrency/);
    expect((await endpoints.findOne({ _id: id }))?.concurrency).toBe(3);
  });

  it('lists the webhook routes in the Management OpenAPI document with their capability', async () => {
    const doc = (await world.app.inject({ method: 'GET', url: '/api/manage/v1/openapi.json' })).json();
    const paths = Object.keys(doc.paths);
    expect(paths).toEqual(expect.arrayContaining(['/events', '/webhooks', '/webhooks/{id}', '/webhooks/{id}/rotate-secret', '/webhooks/{id}/resume']));
    expect(doc.paths['/webhooks/{id}/resume'].post.responses['404']).toBeDefined();
    expect(doc.paths['/webhooks'].post['x-required-capability']).toBeDefined();
  });
});
