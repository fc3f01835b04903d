import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { createApiKey, openSession, setManagementApi, signIn } from '../support/access.ts';
import { addUser, bearer } from './world-helpers.ts';

// The admin UI's way into the Management operations: the same definitions on the cookie session (services/http/session-twins.ts).
let world: World;
let editor: { cookie: string; origin: string };
let viewer: { cookie: string; origin: string };
beforeAll(async () => {
  world = await startWorld();
  editor = await openSession(world, (await addUser(world, 'twin-editor@example.com', 'editor')).id);
  viewer = await openSession(world, (await addUser(world, 'twin-viewer@example.com', 'viewer')).id);
});
afterAll(async () => {
  await world?.close();
});

const asSession = (session: { cookie: string; origin: string }, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  world.app.inject({ method, url, headers: { cookie: session.cookie, origin: session.origin }, ...(payload ? { payload } : {}) });

const titles = async (): Promise<string[]> => {
  const { key } = await createApiKey(world, { capabilities: ['content:read'] });
  const list = await world.app.inject({ method: 'GET', url: '/api/manage/v1/content?limit=200', headers: bearer(key) });
  return (list.json().data as { title: string }[]).map((item) => item.title);
};

describe('Management operations on the cookie session', () => {
  it('an editor creates, changes, publishes and lists entries at /api/content, as the key would', async () => {
    const created = await asSession(editor, 'POST', '/api/content', { type: 'post', title: 'Written in the admin' });
    expect(created.statusCode).toBe(201);
    const entry = created.json();
    expect(entry.title).toBe('Written in the admin');

    const changed = await asSession(editor, 'PATCH', `/api/content/${entry.id}`, { title: 'Changed in the admin', expectedVersion: entry.version });
    expect(changed.statusCode).toBe(200);
    const published = await asSession(editor, 'POST', `/api/content/${entry.id}/publish`, {});
    expect(published.statusCode).toBe(200);
    expect(published.json().status).toBe('published');

    const listed = await asSession(editor, 'GET', '/api/content?limit=200');
    expect(listed.statusCode).toBe(200);
    expect(listed.json().data.map((item: { id: string }) => item.id)).toContain(entry.id);

    // Audit rows are queued, never awaited: the same action names as through a key.
    const admin = await signIn(world);
    await expect
      .poll(async () => {
        const audit = await asSession(admin, 'GET', `/api/audit?targetId=${entry.id}&limit=200`);
        return (audit.json().data as { action: string }[]).map((row) => row.action);
      })
      .toEqual(expect.arrayContaining(['content.create', 'content.update', 'content.publish']));
  });

  it('the role decides: a viewer reads but cannot create (generic 403, nothing written)', async () => {
    expect((await asSession(viewer, 'GET', '/api/content')).statusCode).toBe(200);
    const refused = await asSession(viewer, 'POST', '/api/content', { type: 'post', title: 'Viewer tried' });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({ error: 'Forbidden' });
    expect(await titles()).not.toContain('Viewer tried');
  });

  it('a write from a foreign origin, or without a session, is refused and changes nothing', async () => {
    const foreign = await world.app.inject({
      method: 'POST',
      url: '/api/content',
      headers: { cookie: editor.cookie, origin: 'http://evil.example' },
      payload: { type: 'post', title: 'Cross-site' },
    });
    expect(foreign.statusCode).toBe(403);
    const anonymous = await world.app.inject({
      method: 'POST',
      url: '/api/content',
      headers: { origin: editor.origin },
      payload: { type: 'post', title: 'Nobody' },
    });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toEqual({ error: 'Unauthorized' });
    expect(await titles()).not.toEqual(expect.arrayContaining(['Cross-site']));
    expect(await titles()).not.toContain('Nobody');
  });

  it('a bearer key opens nothing on the session routes, and the Management API switch does not close the admin', async () => {
    const { key } = await createApiKey(world, { capabilities: ['content:read', 'content:create'] });
    expect((await world.app.inject({ method: 'GET', url: '/api/content', headers: bearer(key) })).statusCode).toBe(401);
    await setManagementApi(world, false);
    try {
      expect((await world.app.inject({ method: 'GET', url: '/api/manage/v1/content', headers: bearer(key) })).statusCode).toBe(403);
      expect((await asSession(editor, 'GET', '/api/content')).statusCode).toBe(200);
    } finally {
      await setManagementApi(world, true);
    }
  });

  it('platform operations stay off the site session: operators are managed with keys, tenants in the console', async () => {
    const admin = await signIn(world);
    expect((await asSession(admin, 'GET', '/api/operators')).statusCode).toBe(404);
    expect((await asSession(admin, 'GET', '/api/tenants')).statusCode).toBe(404);
  });
});
