import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BSON } from 'mongodb';
import { startWorld, type World } from '../support/world.ts';
import { socketGet } from '../support/listening-gateway.ts';
import { createApiKey, defaultSiteContext, setManagementApi } from '../support/access.ts';
import { accessCollections } from '../../services/access/model.ts';
import { settingsCollection, settingsId } from '../../services/access/site-settings-store.ts';
import { ANONYMOUS_ROWS_PER_WINDOW, FAILURE_RETENTION_MS, FAILURE_WINDOW_MS, OVERFLOW_IP } from '../../services/access/audit.ts';
import { runRetentionPass } from '../../services/platform/retention.ts';
import { recordChange } from '../../services/audit/record.ts';
import { systemPrincipal } from '../../services/core/principal.ts';
import { sessionCookie } from '../../services/access/session-cookie.ts';
import { pinnedClock } from './clock.ts';

// TRUST_PROXY (docs/access.md, "Client address"): X-Forwarded-For is believed only from the
// proxies it names, by Fastify's routes and by the management lane in front of them alike; and
// what a caller's address can add to the database (counters, audit rows) stays bounded.

const FORGED = '10.9.9.9';
const junkKey = `svk_${'j'.repeat(12)}${'Q'.repeat(43)}`;

/** The lanes sit in the HTTP server: these tests send real requests to it, on loopback. */
async function listen(world: World): Promise<number> {
  await world.app.listen({ port: 0, host: '127.0.0.1' });
  return (world.app.server.address() as { port: number }).port;
}

async function site(world: World) {
  const ctx = await defaultSiteContext(world);
  return { db: ctx.db, siteId: ctx.site._id, ...accessCollections(ctx.db) };
}

/** The per-IP counter documents of keyed requests, by address (`req:i<address>` in rate_counters). */
async function ipCounters(world: World): Promise<string[]> {
  const { counters, siteId } = await site(world);
  const rows = await counters.find({ siteId, _id: { $regex: ':req:i' } }).toArray();
  return rows.map((row) => /:req:i([^:]+):/.exec(row._id)![1]);
}

describe('no proxy trusted (the default)', () => {
  let world: World;
  let port: number;
  const clock = pinnedClock();
  beforeAll(async () => {
    world = await startWorld({ clock });
    port = await listen(world);
  });
  afterAll(async () => world?.close());

  const injected = (key: string, remoteAddress: string, headers: Record<string, string> = {}) =>
    world.app.inject({ method: 'GET', url: '/api/manage/v1/content?limit=1', headers: { authorization: `Bearer ${key}`, ...headers }, remoteAddress });

  it('ignores a forged X-Forwarded-For on the full path and in the management lane: allowed IPs, per-IP counts and audit use the real address', async () => {
    const only10 = await createApiKey(world, { capabilities: ['content:read'], allowedIps: [FORGED] });
    const forged = { 'x-forwarded-for': FORGED };
    expect((await injected(only10.key, '127.0.0.1', forged)).statusCode).toBe(401);
    for (let i = 0; i < 2; i++)
      expect((await socketGet(port, '/api/manage/v1/content?limit=1', { authorization: `Bearer ${only10.key}`, ...forged })).statusCode).toBe(401);

    // A key this gateway holds and a held answer: the lane answers, from the socket's address.
    const local = await createApiKey(world, { capabilities: ['content:read'], allowedIps: ['127.0.0.1'] });
    const get = (headers: Record<string, string>) => socketGet(port, '/api/manage/v1/content?limit=1', { authorization: `Bearer ${local.key}`, ...headers });
    expect((await get({})).statusCode).toBe(200);
    const before = world.app.manageLane.answered;
    for (let i = 0; i < 3; i++) expect((await get({ 'x-forwarded-for': FORGED })).statusCode).toBe(200);
    expect(world.app.manageLane.answered).toBe(before + 3);

    expect(await ipCounters(world)).toEqual(['127_0_0_1']);
    const { audit, counters, siteId } = await site(world);
    const failures = await audit.find({ siteId, action: 'auth.failed' }).toArray();
    expect(failures.length).toBeGreaterThan(0);
    expect(failures.every((row) => row.ip === '127.0.0.1')).toBe(true);
    expect(failures.find((row) => row.keyId === only10.id)).toMatchObject({ reason: 'ip-not-allowed', count: 3 });
    expect(await counters.countDocuments({ siteId, _id: { $regex: `authfail:${FORGED.replace(/\./g, '\\.')}:` } })).toBe(0);
  });

  it('marks no session cookie Secure (no TLS proxy in front)', () => {
    expect(sessionCookie({ token: 't', expiresAt: new Date(clock.now().getTime() + 60_000) }, world.config, clock.now())).not.toMatch(/Secure/);
  });

  it('many client addresses do not grow the site settings document: each address counts on a document of its own that expires', async () => {
    const { key } = await createApiKey(world, { capabilities: ['content:read'] });
    await injected(key, '127.0.0.1');
    const { siteId } = await site(world);
    const settings = settingsCollection((await site(world)).db);
    const sizeBefore = BSON.calculateObjectSize((await settings.findOne({ _id: settingsId(siteId) }))!);
    const addresses = Array.from({ length: 300 }, (_, i) => (i % 2 ? `198.18.${i >> 8}.${i & 255}` : `2001:db8::${i.toString(16)}`));
    for (let i = 0; i < addresses.length; i += 30) {
      const statuses = await Promise.all(addresses.slice(i, i + 30).map(async (address) => (await injected(key, address)).statusCode));
      expect(statuses.every((status) => status === 200)).toBe(true);
    }
    const after = (await settings.findOne({ _id: settingsId(siteId) }))!;
    // One counter field per key in use, whatever the number of addresses.
    const fields = Object.values(after.rl ?? {}).flatMap((window) => Object.keys(window));
    expect(fields.every((field) => field.startsWith('k'))).toBe(true);
    expect(fields.length).toBeLessThanOrEqual(5);
    expect(BSON.calculateObjectSize(after) - sizeBefore).toBeLessThan(200);
    expect((await ipCounters(world)).length).toBeGreaterThanOrEqual(301);

    const { counters } = await site(world);
    expect(await counters.countDocuments({ siteId, expiresAt: { $exists: false } })).toBe(0);
  });

  it('audits nothing and counts nothing while the Management API is switched off', async () => {
    const { audit, counters, siteId } = await site(world);
    await setManagementApi(world, false);
    const rows = await audit.countDocuments({ siteId });
    const counted = await counters.countDocuments({ siteId });
    for (let i = 0; i < 20; i++) expect((await injected(junkKey, `203.0.113.${i}`)).statusCode).toBe(403);
    expect(await audit.countDocuments({ siteId })).toBe(rows);
    expect(await counters.countDocuments({ siteId })).toBe(counted);
    await setManagementApi(world, true);
  });

  it('anonymous failures add at most a bounded number of audit rows per window, every failure still counted, and expire', async () => {
    const { audit, siteId } = await site(world);
    const anonymousRows = () => audit.find({ siteId, action: 'auth.failed', keyId: null, userId: null }).toArray();
    const already = await anonymousRows();
    const alreadyCounted = already.reduce((sum, row) => sum + (row.count ?? 1), 0);
    const attempts = ANONYMOUS_ROWS_PER_WINDOW + 60;
    for (let i = 0; i < attempts; i += 40) {
      await Promise.all(Array.from({ length: Math.min(40, attempts - i) }, (_, j) => injected(junkKey, `2001:db8:aa::${(i + j).toString(16)}`)));
    }
    const rows = await anonymousRows();
    // One row per address up to the cap (the first test's address included), then one overflow row.
    expect(rows.length).toBeLessThanOrEqual(ANONYMOUS_ROWS_PER_WINDOW + 1);
    expect(rows.reduce((sum, row) => sum + (row.count ?? 1), 0) - alreadyCounted).toBe(attempts);
    const overflow = rows.filter((row) => row.ip === OVERFLOW_IP);
    expect(overflow).toHaveLength(1);
    expect(overflow[0]).toMatchObject({ reason: 'overflow' });
    expect(overflow[0].count).toBeGreaterThanOrEqual(attempts + already.length - ANONYMOUS_ROWS_PER_WINDOW);
    for (const row of rows) expect(row.expiresAt!.getTime()).toBeLessThanOrEqual(clock.now().getTime() + FAILURE_WINDOW_MS + FAILURE_RETENTION_MS);

    // The worker's purge (the local engine runs no TTL index) drops them after their retention;
    // the audit of changes (kept for the workspace's longer retention) stays.
    const ctx = await defaultSiteContext(world);
    recordChange({ ...ctx, principal: systemPrincipal('test') }, { action: 'key.created', target: { kind: 'apiKeys', id: 'k1' } });
    await world.services.audit.settled();
    const administration = await audit.countDocuments({ siteId, action: 'key.created' });
    expect(administration).toBeGreaterThan(0);
    clock.advance(FAILURE_WINDOW_MS + FAILURE_RETENTION_MS);
    expect((await runRetentionPass(world.services)).audit).toBeGreaterThanOrEqual(rows.length);
    expect(await audit.countDocuments({ siteId, action: 'auth.failed' })).toBe(0);
    expect(await audit.countDocuments({ siteId, action: 'key.created' })).toBe(administration);
    expect(await ipCounters(world)).toEqual([]);
  });
});

describe('TRUST_PROXY=127.0.0.1', () => {
  let world: World;
  let port: number;
  const clock = pinnedClock();
  beforeAll(async () => {
    world = await startWorld({ clock, env: { TRUST_PROXY: '127.0.0.1' } });
    port = await listen(world);
  });
  afterAll(async () => world?.close());

  it('takes the client address the proxy forwards, on the full path and in the management lane', async () => {
    const only10 = await createApiKey(world, { capabilities: ['content:read'], allowedIps: [FORGED] });
    const get = (headers: Record<string, string>) => socketGet(port, '/api/manage/v1/content?limit=1', { authorization: `Bearer ${only10.key}`, ...headers });
    expect((await get({ 'x-forwarded-for': FORGED })).statusCode).toBe(200);
    const before = world.app.manageLane.answered;
    expect((await get({ 'x-forwarded-for': FORGED })).statusCode).toBe(200);
    expect(world.app.manageLane.answered).toBe(before + 1);
    // The client's own entries in front of what the proxy appended are not believed.
    expect((await get({ 'x-forwarded-for': `${FORGED}, 198.51.100.7` })).statusCode).toBe(401);
    expect((await get({})).statusCode).toBe(401);
    expect(await ipCounters(world)).toContain('10_9_9_9');

    const failed = await world.app.inject({
      method: 'GET',
      url: '/api/manage/v1/content',
      headers: { authorization: `Bearer ${junkKey}`, 'x-forwarded-for': '198.51.100.9' },
    });
    expect(failed.statusCode).toBe(401);
    const { audit, siteId } = await site(world);
    expect(await audit.countDocuments({ siteId, action: 'auth.failed', ip: '198.51.100.9' })).toBe(1);
  });

  it('marks the session cookie Secure (the proxy terminates TLS)', () => {
    expect(sessionCookie({ token: 't', expiresAt: new Date(clock.now().getTime() + 60_000) }, world.config, clock.now())).toMatch(/; Secure$/);
  });
});
