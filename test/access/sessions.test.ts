import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { currentCode, defaultSiteContext, signIn } from '../support/access.ts';
import { accessCollections } from '../../services/access/model.ts';
import { LOGIN_BUDGETS, loginAddress } from '../../services/access/login-throttle.ts';
import { movableClock } from './clock.ts';
import { addUser } from './world-helpers.ts';

let world: World;
// Sign-in backoff is measured in minutes: the test moves the clock instead of waiting.
const clock = movableClock();
beforeAll(async () => {
  world = await startWorld({ clock });
});
afterAll(async () => {
  await world?.close();
});

// An account the helpers enrolled in two-factor sign-in (the operator, once `signIn` ran) sends its current code.
const login = async (email: string, password: string, remoteAddress = '127.0.0.1') => {
  const code = await currentCode(world, email);
  return world.app.inject({
    method: 'POST',
    url: '/api/auth/login',
    headers: { origin: 'http://localhost' },
    payload: { email, password, code },
    remoteAddress,
  });
};
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
    const ok = await world.app.inject({
      method: 'POST',
      url: '/api/api-keys',
      headers: { cookie, origin },
      payload: { name: 'ok', capabilities: ['content:read'] },
    });
    expect(ok.statusCode).toBe(201);
  });
});

describe('sign-in throttling', () => {
  const { pair, address, account } = LOGIN_BUDGETS;
  const statuses = (answers: Array<{ statusCode: number }>) => answers.map((a) => a.statusCode);
  /** The password checks that failed for this user: every one is audited (aggregated rows carry `count`). */
  const failedChecks = async (userId: string) => {
    const ctx = await defaultSiteContext(world);
    const rows = await accessCollections(ctx.db).audit.find({ siteId: ctx.site._id, action: 'login.failed', userId }).toArray();
    return rows.reduce((sum, row) => sum + (row.count ?? 1), 0);
  };

  it('50 concurrent wrong passwords get no more password checks than the budget; the owner still signs in from elsewhere', { timeout: 300_000 }, async () => {
    const user = await addUser(world, 'burst@example.test', 'viewer');
    const attacker = '10.30.0.1';
    const burst = await Promise.all(Array.from({ length: 50 }, () => login(user.email, 'nope-nope-nope', attacker)));
    expect(statuses(burst).filter((s) => s === 401)).toHaveLength(pair.free);
    expect(statuses(burst).filter((s) => s === 429)).toHaveLength(50 - pair.free);
    for (const refused of burst.filter((a) => a.statusCode === 429)) {
      expect(refused.json()).toEqual({ error: 'Too many requests' });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    }
    // Every password check is audited, and nothing else is: exactly the budget's checks ran.
    expect(await failedChecks(user.id)).toBe(pair.free);
    // From the attacker's address even the right password waits now …
    expect((await login(user.email, user.password, attacker)).statusCode).toBe(429);
    // … but the owner, from another address never seen before, is not locked out.
    expect((await login(user.email, user.password, '10.30.0.2')).statusCode).toBe(200);
    // Another account from the attacker's address has its own pair budget.
    expect((await login(world.admin.email, world.admin.password, attacker)).statusCode).toBe(200);
  });

  it('after the pair budget the waits double (1 min, then 2 more, …); a success clears the pair', { timeout: 300_000 }, async () => {
    const user = await addUser(world, 'backoff@example.test', 'viewer');
    const from = '10.31.0.1';
    for (let i = 0; i < pair.free; i++) expect((await login(user.email, 'wrong-wrong-wrong', from)).statusCode).toBe(401);
    const first = await login(user.email, user.password, from);
    expect(first.statusCode).toBe(429);
    expect(Number(first.headers['retry-after'])).toBeLessThanOrEqual(60);
    clock.advance(Number(first.headers['retry-after']) * 1000);
    expect((await login(user.email, 'wrong-wrong-wrong', from)).statusCode).toBe(401);
    const second = await login(user.email, user.password, from);
    expect(second.statusCode).toBe(429);
    expect(Number(second.headers['retry-after'])).toBeGreaterThan(60);
    expect(Number(second.headers['retry-after'])).toBeLessThanOrEqual(120);
    clock.advance(Number(second.headers['retry-after']) * 1000);
    expect((await login(user.email, user.password, from)).statusCode).toBe(200);
    // The success cleared the pair: a full budget of attempts again.
    for (let i = 0; i < pair.free; i++) expect((await login(user.email, 'wrong-wrong-wrong', from)).statusCode).toBe(401);
    expect((await login(user.email, 'wrong-wrong-wrong', from)).statusCode).toBe(429);
    expect(await failedChecks(user.id)).toBe(2 * pair.free + 1);
  });

  it('guessing from many addresses slows strangers down, never the owner at an address that signed in before', { timeout: 300_000 }, async () => {
    const user = await addUser(world, 'spread@example.test', 'viewer');
    const home = '10.32.0.1';
    expect((await login(user.email, user.password, home)).statusCode).toBe(200);
    const addresses = Math.ceil(account.free / pair.free) + 1;
    const guesses = await Promise.all(
      Array.from({ length: addresses * pair.free }, (_, i) => login(user.email, 'guess-guess-guess', `10.32.1.${Math.floor(i / pair.free) + 1}`)),
    );
    expect(statuses(guesses).filter((s) => s === 401)).toHaveLength(account.free);
    expect(await failedChecks(user.id)).toBe(account.free);
    // A new address waits (a backoff with a cap, not a lock) …
    const stranger = await login(user.email, user.password, '10.32.2.1');
    expect(stranger.statusCode).toBe(429);
    expect(Number(stranger.headers['retry-after'])).toBeLessThanOrEqual(account.backoffCapMs / 1000);
    // … the owner's address does not.
    expect((await login(user.email, user.password, home)).statusCode).toBe(200);
  });

  it('per address: many accounts guessed from one address are cut off; other addresses are not', { timeout: 300_000 }, async () => {
    const from = '10.40.0.1';
    const guesses = await Promise.all(Array.from({ length: address.free + 5 }, (_, i) => login(`nobody-${i}@example.test`, 'guess-guess-guess', from)));
    expect(statuses(guesses).filter((s) => s === 401)).toHaveLength(address.free);
    expect(statuses(guesses).filter((s) => s === 429)).toHaveLength(5);
    expect((await login(world.admin.email, world.admin.password, from)).statusCode).toBe(429);
    expect((await login(world.admin.email, world.admin.password, '10.40.0.2')).statusCode).toBe(200);
  });

  it('counts an IPv6 client per /64 and an IPv4-mapped client as IPv4', () => {
    expect(loginAddress('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(loginAddress('2001:0DB8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(loginAddress('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(loginAddress('::1')).toBe('0:0:0:0::/64');
    expect(loginAddress('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(loginAddress('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(loginAddress('192.0.2.7')).toBe('192.0.2.7');
  });
});
