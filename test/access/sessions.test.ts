import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { defaultSiteContext, signIn } from '../support/access.ts';
import { accessCollections } from '../../services/access/model.ts';
import { LOGIN_FAILURES_PER_ACCOUNT, LOGIN_FAILURES_PER_IP } from '../../services/access/login-throttle.ts';
import { addUser } from './world-helpers.ts';

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(async () => {
  await world?.close();
});

const login = (email: string, password: string, remoteAddress = '127.0.0.1') =>
  world.app.inject({ method: 'POST', url: '/api/auth/login', headers: { origin: 'http://localhost' }, payload: { email, password }, remoteAddress });
const cookieOf = (res: { headers: Record<string, unknown> }) => String(res.headers['set-cookie']).split(';')[0];

describe('sign-in', () => {
  it('sets an HttpOnly SameSite session cookie; me works; logout ends the session', async () => {
    const res = await login(world.admin.email.toUpperCase(), world.admin.password);
    expect(res.statusCode).toBe(200);
    const setCookie = String(res.headers['set-cookie']);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Lax/);
    expect(setCookie).toMatch(/Path=\//);
    const cookie = cookieOf(res);
    const me = await world.app.inject({ method: 'GET', url: '/api/auth/me', headers: { cookie } });
    expect(me.json().user.email).toBe(world.admin.email);

    const out = await world.app.inject({ method: 'POST', url: '/api/auth/logout', headers: { cookie, origin: 'http://localhost' } });
    expect(out.statusCode).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/Max-Age=0/);
    const after = await world.app.inject({ method: 'GET', url: '/api/auth/me', headers: { cookie } });
    expect(after.statusCode).toBe(401);
    expect(after.json()).toEqual({ error: 'Unauthorized' });
  });

  it('a wrong password is a 401 and the cookie it left opens nothing', async () => {
    const res = await login(world.admin.email, 'wrong-password-entirely', '10.20.0.1');
    expect(res.statusCode).toBe(401);
    const me = await world.app.inject({ method: 'GET', url: '/api/auth/me', headers: { cookie: cookieOf(res) } });
    expect(me.statusCode).toBe(401);
  });

  it('rejects malformed login bodies with 400', async () => {
    const res = await world.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: 'x' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/password/);
  });

  it('sessions are stored server-side by hash, never by the cookie value', async () => {
    const { cookie } = await signIn(world);
    const token = cookie.split('=')[1];
    const ctx = await defaultSiteContext(world);
    const rows = JSON.stringify(await accessCollections(ctx.db).sessions.find({}).toArray());
    expect(rows).not.toContain(token);
  });
});

describe('CSRF', () => {
  it('refuses cookie-authenticated state changes without a same-site Origin and changes nothing', async () => {
    const { cookie, origin } = await signIn(world);
    const before = (await world.app.inject({ method: 'GET', url: '/api/api-keys', headers: { cookie } })).json().data.length;
    for (const headers of [{ cookie }, { cookie, origin: 'https://evil.example' }, { cookie, origin: 'null' }]) {
      const res = await world.app.inject({ method: 'POST', url: '/api/api-keys', headers, payload: { name: 'csrf', capabilities: ['content:read'] } });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: 'Forbidden' });
      const put = await world.app.inject({ method: 'PUT', url: '/api/api-keys/settings', headers, payload: { enabled: true } });
      expect(put.statusCode).toBe(403);
    }
    const after = (await world.app.inject({ method: 'GET', url: '/api/api-keys', headers: { cookie } })).json().data.length;
    expect(after).toBe(before);
    const settings = await world.app.inject({ method: 'GET', url: '/api/api-keys/settings', headers: { cookie } });
    expect(settings.json().enabled).toBe(false);
    const ok = await world.app.inject({ method: 'POST', url: '/api/api-keys', headers: { cookie, origin }, payload: { name: 'ok', capabilities: ['content:read'] } });
    expect(ok.statusCode).toBe(201);
  });
});

describe('login throttling', () => {
  it('per account: after the failure budget even the right password is refused with 429', { timeout: 300_000 }, async () => {
    const user = await addUser(world, 'throttled@example.test', 'viewer');
    for (let i = 0; i < LOGIN_FAILURES_PER_ACCOUNT; i++) {
      expect((await login(user.email, 'nope-nope-nope', `10.30.0.${i + 1}`)).statusCode).toBe(401);
    }
    const blocked = await login(user.email, user.password, '10.30.1.1');
    expect(blocked.statusCode).toBe(429);
    expect(blocked.headers['retry-after']).toMatch(/^\d+$/);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    // Another account is unaffected.
    expect((await login(world.admin.email, world.admin.password, '10.30.1.1')).statusCode).toBe(200);
  });

  it('per IP: many accounts guessed from one address are cut off', { timeout: 300_000 }, async () => {
    for (let i = 0; i < LOGIN_FAILURES_PER_IP; i++) {
      expect((await login(`nobody-${i}@example.test`, 'guess-guess-guess', '10.40.0.1')).statusCode).toBe(401);
    }
    const blocked = await login(world.admin.email, world.admin.password, '10.40.0.1');
    expect(blocked.statusCode).toBe(429);
    expect((await login(world.admin.email, world.admin.password, '10.40.0.2')).statusCode).toBe(200);
  });
});
