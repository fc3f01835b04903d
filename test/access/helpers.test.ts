import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { createApiKey, signIn } from '../support/access.ts';

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(async () => {
  await world?.close();
});

describe('test support for access', () => {
  it('signIn gives a cookie that /api/auth/me accepts', async () => {
    const { cookie } = await signIn(world);
    const me = await world.app.inject({ method: 'GET', url: '/api/auth/me', headers: { cookie } });
    expect(me.statusCode).toBe(200);
    expect(me.json().user.email).toBe(world.admin.email);
    expect(me.json().user.capabilities).toContain('site:admin');
    expect(me.json().user.platformOperator).toBe(true);
  });

  it('createApiKey gives a working bearer key on the Management API', async () => {
    const { key, id } = await createApiKey(world, { capabilities: ['settings:read'] });
    expect(key).toMatch(/^svk_[a-z0-9]{12}[A-Za-z0-9_-]{43}$/);
    expect(id).toBeTruthy();
    const res = await world.app.inject({ method: 'GET', url: '/api/manage/v1/settings', headers: { authorization: `Bearer ${key}` } });
    expect(res.statusCode).toBe(200);
    expect(res.headers.ratelimit).toMatch(/r=\d+;t=\d+/);
    const denied = await world.app.inject({
      method: 'PATCH',
      url: '/api/manage/v1/settings',
      headers: { authorization: `Bearer ${key}` },
      payload: { title: 'x' },
    });
    expect(denied.statusCode).toBe(403);
  });
});
