import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { createApiKey, defaultSiteContext } from '../support/access.ts';
import { accessCollections } from '../../services/access/model.ts';
import { verifyPassword } from '../../services/access/passwords.ts';
import { BUILT_IN_ROLES } from '../../services/access/roles.ts';
import { CAPABILITIES } from '../../services/core/capabilities.ts';
import { bearer } from './world-helpers.ts';

let world: World;
let key: string;
let reader: string;
const events: { event: string; data: Record<string, unknown> }[] = [];

beforeAll(async () => {
  world = await startWorld({ events: () => ({ publish: async (_ctx, event, data) => void events.push({ event, data }) }) });
  // Every workspace capability: what a key grants is held to what it holds (privilege-escalation.test.ts).
  key = (await createApiKey(world, { capabilities: [...CAPABILITIES] })).key;
  reader = (await createApiKey(world, { capabilities: ['users:read'] })).key;
});
afterAll(async () => {
  await world?.close();
});

const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object, as = key) =>
  world.app.inject({ method, url: `/api/manage/v1${url}`, headers: bearer(as), ...(payload ? { payload } : {}) });
const userCount = async () => accessCollections((await defaultSiteContext(world)).db).users.countDocuments();

describe('users', () => {
  it('creates (201), lists with effective access, reads, updates and deletes, emitting events', async () => {
    const created = await call('POST', '/users', { email: 'Writer@Example.test', password: 'a-long-password-1', role: 'author', name: 'W' });
    expect(created.statusCode).toBe(201);
    const user = created.json();
    expect(user).toMatchObject({ email: 'writer@example.test', role: 'author', platformOperator: false });
    expect(user.effectiveCapabilities).toEqual([...BUILT_IN_ROLES.author.capabilities].sort());
    expect(JSON.stringify(user)).not.toMatch(/password/i);

    const stored = await accessCollections((await defaultSiteContext(world)).db).users.findOne({ _id: user.id });
    expect(stored!.passwordHash).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(await verifyPassword('a-long-password-1', stored!.passwordHash)).toBe(true);

    const list = await call('GET', '/users?limit=1', undefined, reader);
    expect(list.statusCode).toBe(200);
    expect(list.json().page).toMatchObject({ limit: 1, total: 1 });
    expect(list.json().page.nextCursor).toBeTruthy();
    const page2 = await call('GET', `/users?limit=1&cursor=${encodeURIComponent(list.json().page.nextCursor)}`, undefined, reader);
    expect(page2.json().data[0].id).not.toBe(list.json().data[0].id);
    expect((await call('GET', '/users?cursor=garbage', undefined, reader)).statusCode).toBe(400);

    const patched = await call('PATCH', `/users/${user.id}`, { role: 'editor', policy: { deny: ['content:delete'], grant: ['analytics:read'] } });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().effectiveCapabilities).not.toContain('content:delete');
    expect(patched.json().effectiveCapabilities).toContain('content:publish');
    expect((await call('GET', `/users/${user.id}`, undefined, reader)).json().role).toBe('editor');

    expect((await call('DELETE', `/users/${user.id}`)).statusCode).toBe(200);
    expect((await call('GET', `/users/${user.id}`, undefined, reader)).statusCode).toBe(404);
    expect(events.map((e) => e.event)).toEqual(expect.arrayContaining(['user.created', 'user.updated', 'user.deleted']));
  });

  it('rejects invalid users with 400 (and duplicates with 409), creating nothing', async () => {
    const before = await userCount();
    for (const payload of [
      { email: 'not-an-email', password: 'a-long-password-1' },
      { email: 'ok@example.test', password: 'short' },
      { email: 'ok@example.test', password: 'a-long-password-1', role: 'no-such-role' },
      { email: 'ok@example.test', password: 'a-long-password-1', policy: { grant: ['root'] } },
      { email: 'ok@example.test', password: 'a-long-password-1', platformOperator: true },
    ]) {
      const res = await call('POST', '/users', payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(typeof res.json().error).toBe('string');
    }
    expect(await userCount()).toBe(before);
    const dup = await call('POST', '/users', { email: world.admin.email.toUpperCase(), password: 'a-long-password-1' });
    expect(dup.statusCode).toBe(409);
    expect(await userCount()).toBe(before);
  });

  it('needs users:manage to write and users:read to read', async () => {
    expect((await call('POST', '/users', { email: 'x@example.test', password: 'a-long-password-1' }, reader)).statusCode).toBe(403);
    const none = (await createApiKey(world, { capabilities: ['content:read'] })).key;
    expect((await call('GET', '/users', undefined, none)).statusCode).toBe(403);
  });
});

describe('roles', () => {
  it('lists built-in roles (administrator holds every capability) and manages custom ones', async () => {
    const list = await call('GET', '/roles', undefined, reader);
    const admin = list.json().data.find((r: { id: string }) => r.id === 'administrator');
    expect(admin.capabilities).toEqual([...CAPABILITIES]);
    expect(list.json().data.map((r: { id: string }) => r.id)).toEqual(expect.arrayContaining(['editor', 'author', 'contributor', 'viewer']));

    const role = await call('POST', '/roles', { name: 'Moderator', capabilities: ['comments:moderate', 'content:read'] });
    expect(role.statusCode).toBe(201);
    const id = role.json().id;
    const user = (await call('POST', '/users', { email: 'mod@example.test', password: 'a-long-password-1', role: id })).json();
    expect(user.effectiveCapabilities).toEqual(['comments:moderate', 'content:read']);
    await call('PATCH', `/roles/${id}`, { capabilities: ['comments:moderate'] });
    expect((await call('GET', `/users/${user.id}`, undefined, reader)).json().effectiveCapabilities).toEqual(['comments:moderate']);
    expect((await call('DELETE', `/roles/${id}`)).statusCode).toBe(409);
    await call('DELETE', `/users/${user.id}`);
    expect((await call('DELETE', `/roles/${id}`)).statusCode).toBe(200);
    expect((await call('GET', `/roles/${id}`, undefined, reader)).statusCode).toBe(404);
  });

  it('refuses changes to built-in roles and invalid role bodies', async () => {
    expect((await call('PATCH', '/roles/administrator', { capabilities: [] })).statusCode).toBe(400);
    expect((await call('DELETE', '/roles/viewer')).statusCode).toBe(400);
    expect((await call('POST', '/roles', { name: '', capabilities: [] })).statusCode).toBe(400);
    expect((await call('POST', '/roles', { name: 'X', capabilities: ['nope'] })).statusCode).toBe(400);
    expect((await call('GET', '/roles', undefined, reader)).json().data.some((r: { name: string }) => r.name === 'X')).toBe(false);
  });
});
