import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { createApiKey, defaultSiteContext, signIn } from '../support/access.ts';
import { featuresWithProbe, seedProbeItems } from './probe-feature.ts';
import { movableClock } from './clock.ts';
import { addUser, bearer } from './world-helpers.ts';
import { accessCollections } from '../../services/access/model.ts';
import { CAPABILITIES } from '../../services/core/capabilities.ts';

const clock = movableClock();
let world: World;
let admin: { cookie: string; origin: string };
let adminId: string;

beforeAll(async () => {
  world = await startWorld({ features: featuresWithProbe, clock });
  admin = await signIn(world);
  const ctx = await defaultSiteContext(world);
  adminId = (await accessCollections(ctx.db).users.findOne({ email: world.admin.email }))!._id;
  await seedProbeItems(ctx.db, ctx.site._id, [
    { _id: 'a-post-en-admin', type: 'post', locale: 'en', authorId: adminId },
    { _id: 'b-page-en-admin', type: 'page', locale: 'en', authorId: adminId },
    { _id: 'c-post-de-admin', type: 'post', locale: 'de', authorId: adminId },
    { _id: 'd-post-en-other', type: 'post', locale: 'en', authorId: 'someone-else' },
  ]);
});
afterAll(async () => {
  await world?.close();
});

const get = (key: string, url: string, headers: Record<string, string> = {}, remoteAddress?: string) =>
  world.app.inject({ method: 'GET', url: `/api/manage/v1${url}`, headers: bearer(key, headers), ...(remoteAddress ? { remoteAddress } : {}) });

const adminCall = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT', url: string, payload?: object) =>
  world.app.inject({ method, url, headers: { cookie: admin.cookie, origin: admin.origin }, ...(payload ? { payload } : {}) });

describe('rule 1: creation ceiling', () => {
  it('a key never gets a capability its creator lacks', async () => {
    const limited = await addUser(world, 'limited-admin@example.test', 'administrator', { deny: ['content:delete'] });
    const session = await signIn(world, limited.email, limited.password);
    const headers = { cookie: session.cookie, origin: session.origin };
    const grantable = await world.app.inject({ method: 'GET', url: '/api/api-keys/capabilities', headers });
    expect(grantable.json().capabilities).not.toContain('content:delete');
    expect(grantable.json().capabilities).toContain('content:read');

    const before = await accessCollections(world.services.workspaceDb({ dbName: world.defaultWorkspace.dbName })).apiKeys.countDocuments();
    const refused = await world.app.inject({
      method: 'POST',
      url: '/api/api-keys',
      headers,
      payload: { name: 'x', capabilities: ['content:read', 'content:delete'] },
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({ error: 'Forbidden' });
    const after = await accessCollections(world.services.workspaceDb({ dbName: world.defaultWorkspace.dbName })).apiKeys.countDocuments();
    expect(after).toBe(before);

    const created = await world.app.inject({ method: 'POST', url: '/api/api-keys', headers, payload: { name: 'ok', capabilities: ['content:read'] } });
    expect(created.statusCode).toBe(201);
    expect(created.json().key).toMatch(/^svk_/);
    // Raising the capabilities later is held to the same ceiling.
    const raise = await world.app.inject({
      method: 'PATCH',
      url: `/api/api-keys/${created.json().record.id}`,
      headers,
      payload: { capabilities: ['content:delete'] },
    });
    expect(raise.statusCode).toBe(403);
  });

  it('rejects a bad key body with 400 and creates nothing', async () => {
    const before = await adminCall('GET', '/api/api-keys?limit=200');
    for (const payload of [
      { name: '', capabilities: ['content:read'] },
      { name: 'x', capabilities: ['not:a-capability'] },
      { name: 'x', capabilities: ['content:read'], allowedIps: ['10.0.0.0/33'] },
      { name: 'x', capabilities: ['content:read'], allowedOrigins: ['ftp://x'] },
      { name: 'x', capabilities: ['content:read'], expiresAt: 'tomorrow' },
      { name: 'x', capabilities: ['content:read'], surprise: true },
    ]) {
      const res = await adminCall('POST', '/api/api-keys', payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(typeof res.json().error).toBe('string');
    }
    const after = await adminCall('GET', '/api/api-keys?limit=200');
    expect(after.json().data.length).toBe(before.json().data.length);
  });
});

describe('rule 2: live re-check against the owner', () => {
  it('narrowing the owner role narrows the key on the next request', async () => {
    const editor = await addUser(world, 'editor-owner@example.test', 'editor');
    const { key } = await createApiKey(world, { capabilities: ['users:read', 'content:read'], ownerEmail: editor.email });
    expect((await get(key, '/users')).statusCode).toBe(200);
    const { key: adminKey } = await createApiKey(world, { capabilities: [...CAPABILITIES] });
    const patched = await world.app.inject({
      method: 'PATCH',
      url: `/api/manage/v1/users/${editor.id}`,
      headers: bearer(adminKey),
      payload: { role: 'viewer' },
    });
    expect(patched.statusCode).toBe(200);
    expect((await get(key, '/users')).statusCode).toBe(403);
    expect((await get(key, '/probe')).statusCode).toBe(200);
    // A policy denial narrows it the same way.
    await world.app.inject({
      method: 'PATCH',
      url: `/api/manage/v1/users/${editor.id}`,
      headers: bearer(adminKey),
      payload: { policy: { deny: ['content:read'] } },
    });
    expect((await get(key, '/probe')).statusCode).toBe(403);
  });
});

describe('rule 3: scope on every operation', () => {
  it('filters lists and refuses single items outside the scope', async () => {
    const { key } = await createApiKey(world, { capabilities: ['content:read'], scope: { types: ['post'], locales: ['en'] } });
    expect((await get(key, '/probe')).json().data).toEqual(['a-post-en-admin', 'd-post-en-other']);
    expect((await get(key, '/probe/a-post-en-admin')).statusCode).toBe(200);
    expect((await get(key, '/probe/b-page-en-admin')).statusCode).toBe(401);
    const own = await createApiKey(world, { capabilities: ['content:read'], scope: { ownOnly: true } });
    expect((await get(own.key, '/probe')).json().data).toEqual(['a-post-en-admin', 'b-page-en-admin', 'c-post-de-admin']);
  });
});

describe('key lifecycle', () => {
  it('expiry takes effect on the next request', async () => {
    const { key } = await createApiKey(world, { capabilities: ['content:read'], expiresAt: new Date(clock.now().getTime() + 60 * 60_000) });
    expect((await get(key, '/probe')).statusCode).toBe(200);
    clock.advance(2 * 60 * 60_000);
    expect((await get(key, '/probe')).statusCode).toBe(401);
  });

  it('rotation: the new secret works, the old one fails on the next request', async () => {
    const { key, id } = await createApiKey(world, { capabilities: ['content:read'] });
    expect((await get(key, '/probe')).statusCode).toBe(200);
    const rotated = await adminCall('POST', `/api/api-keys/${id}/rotate`);
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json().key).not.toBe(key);
    expect((await get(key, '/probe')).statusCode).toBe(401);
    expect((await get(rotated.json().key, '/probe')).statusCode).toBe(200);
  });

  it('revocation cuts access on the next request; delete removes the key', async () => {
    const { key, id } = await createApiKey(world, { capabilities: ['content:read'] });
    expect((await get(key, '/probe')).statusCode).toBe(200);
    const revoked = await adminCall('POST', `/api/api-keys/${id}/revoke`);
    expect(revoked.json().record.status).toBe('revoked');
    expect((await get(key, '/probe')).statusCode).toBe(401);
    expect((await adminCall('DELETE', `/api/api-keys/${id}`)).statusCode).toBe(204);
    expect((await adminCall('DELETE', `/api/api-keys/${id}`)).statusCode).toBe(404);
  });

  it('refuses addresses outside allowedIps (IPv4 and IPv6 CIDR) and foreign origins', async () => {
    const v4 = await createApiKey(world, { capabilities: ['content:read'], allowedIps: ['10.0.0.0/8', '192.0.2.7'] });
    expect((await get(v4.key, '/probe', {}, '10.1.2.3')).statusCode).toBe(200);
    expect((await get(v4.key, '/probe', {}, '192.0.2.7')).statusCode).toBe(200);
    expect((await get(v4.key, '/probe', {}, '::ffff:10.9.9.9')).statusCode).toBe(200);
    expect((await get(v4.key, '/probe', {}, '192.0.2.8')).statusCode).toBe(401);
    const v6 = await createApiKey(world, { capabilities: ['content:read'], allowedIps: ['2001:db8::/32'] });
    expect((await get(v6.key, '/probe', {}, '2001:db8:1::5')).statusCode).toBe(200);
    expect((await get(v6.key, '/probe', {}, '2001:db9::5')).statusCode).toBe(401);
    expect((await get(v6.key, '/probe', {}, '10.1.2.3')).statusCode).toBe(401);

    const origin = await createApiKey(world, { capabilities: ['content:read'], allowedOrigins: ['https://app.example.com'] });
    expect((await get(origin.key, '/probe', { origin: 'https://app.example.com' })).statusCode).toBe(200);
    expect((await get(origin.key, '/probe', { origin: 'https://evil.example.com' })).statusCode).toBe(401);
    expect((await get(origin.key, '/probe')).statusCode).toBe(401);
  });
});

describe('generic failures', () => {
  it('unknown, malformed, revoked, expired, rotated-out, out-of-scope and disallowed keys answer byte-identically', async () => {
    const revoked = await createApiKey(world, { capabilities: ['content:read'] });
    await adminCall('POST', `/api/api-keys/${revoked.id}/revoke`);
    const expired = await createApiKey(world, { capabilities: ['content:read'], expiresAt: new Date(clock.now().getTime() + 1000) });
    clock.advance(5000);
    const scoped = await createApiKey(world, { capabilities: ['content:read'], scope: { types: ['page'] } });
    const ip = await createApiKey(world, { capabilities: ['content:read'], allowedIps: ['203.0.113.1'] });
    const rotated = await createApiKey(world, { capabilities: ['content:read'] });
    await adminCall('POST', `/api/api-keys/${rotated.id}/rotate`);
    const answers = await Promise.all([
      get(`svk_${'a'.repeat(12)}${'B'.repeat(43)}`, '/probe/a-post-en-admin'),
      get('not-a-key', '/probe/a-post-en-admin'),
      world.app.inject({ method: 'GET', url: '/api/manage/v1/probe/a-post-en-admin' }),
      get(revoked.key, '/probe/a-post-en-admin'),
      get(expired.key, '/probe/a-post-en-admin'),
      get(scoped.key, '/probe/a-post-en-admin'),
      get(ip.key, '/probe/a-post-en-admin'),
      get(rotated.key, '/probe/a-post-en-admin'),
    ]);
    for (const answer of answers) {
      expect(answer.statusCode).toBe(401);
      expect(answer.body).toBe(answers[0].body);
      expect(answer.headers['content-type']).toBe(answers[0].headers['content-type']);
    }
    expect(answers[0].body).toBe('{"error":"Unauthorized"}');
  });
});

describe('secrets never leave', () => {
  it('no listing returns a secret, its hash or its lookup part; audit rows are written without secrets', async () => {
    const { key, id } = await createApiKey(world, { capabilities: ['content:read'] });
    const rotated = (await adminCall('POST', `/api/api-keys/${id}/rotate`)).json().key as string;
    await adminCall('POST', `/api/api-keys/${id}/revoke`);
    await get(rotated, '/probe');
    const ctx = await defaultSiteContext(world);
    const stored = (await accessCollections(ctx.db).apiKeys.findOne({ _id: id }))!;

    const { key: adminKey } = await createApiKey(world, { capabilities: ['site:admin', 'users:read', 'settings:manage'] });
    const bodies = [
      (await adminCall('GET', '/api/api-keys?limit=200')).body,
      (await adminCall('GET', '/api/audit?limit=200')).body,
      (await get(adminKey, '/audit?limit=200')).body,
      (await get(adminKey, '/users')).body,
      (await get(adminKey, '/settings')).body,
    ];
    for (const body of bodies) {
      for (const secret of [key, rotated, stored.secretHash, stored.lookup, key.slice(4), 'secretHash', 'passwordHash']) {
        expect(body).not.toContain(secret);
      }
    }
    const listed = JSON.parse(bodies[0]).data.find((row: { id: string }) => row.id === id);
    expect(listed).toMatchObject({ id, status: 'revoked' });

    // The key is the target of the changes (made through the admin operations; the test helper
    // created it below them) and the subject of the failure.
    await world.services.audit.settled();
    const audit = await accessCollections(ctx.db)
      .audit.find({ $or: [{ keyId: id }, { 'target.id': id }] })
      .sort({ _id: 1 })
      .toArray();
    // In the order made, but the revocation's row (the runner's trail) and the refusal's (the
    // failure log) are two writers: made in the same millisecond, their ids' random parts decide.
    expect(audit.map((row) => row.action).sort()).toEqual(['auth.failed', 'key.revoked', 'key.rotated']);
    expect(audit[0]!.action).toBe('key.rotated');
    const revoked = audit.find((row) => row.action === 'key.revoked')!;
    const refused = audit.find((row) => row.action === 'auth.failed')!;
    expect(revoked).toMatchObject({ target: { kind: 'apiKeys', id }, operation: 'apiKeys.revoke', keyId: null });
    expect(refused).toMatchObject({ ip: '127.0.0.1', reason: 'revoked' });
    expect(refused.at.getTime()).toBeGreaterThanOrEqual(revoked.at.getTime());
    expect(audit.every((row) => row.at instanceof Date)).toBe(true);
    const allAudit = JSON.stringify(await accessCollections(ctx.db).audit.find({}).toArray());
    for (const secret of [key, rotated, stored.secretHash, stored.lookup]) expect(allAudit).not.toContain(secret);
  });

  it('records failures for unknown keys by reason, without the presented secret', async () => {
    const ghost = `svk_${'z'.repeat(12)}${'Q'.repeat(43)}`;
    await get(ghost, '/probe');
    const ctx = await defaultSiteContext(world);
    const rows = await accessCollections(ctx.db).audit.find({ action: 'auth.failed', keyId: null }).toArray();
    expect(rows.some((row) => row.reason === 'unknown')).toBe(true);
    expect(JSON.stringify(rows)).not.toContain('zzzzzzzzzzzz');
  });
});
