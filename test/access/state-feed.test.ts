import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, startWorld, type World } from '../support/world.ts';
import { createApiKey, signInCode } from '../support/access.ts';
import { ALL_CAPABILITIES } from '../../services/core/capabilities.ts';
import { addUser, bearer } from './world-helpers.ts';
import { call, startGateway, stopGateways, type Gateway } from './gateway-fleet.ts';
import { eventually } from '../support/polling.ts';

// Two real gateway processes (plus this process's in-process gateway) on one set of databases,
// each holding access and workspace state in memory (docs/access.md, "State held by each
// gateway"). Every change is made through gateway 1 and must be seen by the very next request on
// gateway 2: with its feed up (memory), cut (per-request reads) and frozen past its lease.
const LEASE_MS = 1500;
const ROUNDS = 5;

let world: World;
const children: ChildProcess[] = [];
let g1: Gateway;
let g2: Gateway;
let adminKey: string;
let tenant: { id: string; host: string };

beforeAll(async () => {
  // A worker runs the workspace actor: suspension is one of its steps (docs/lifecycle.md).
  world = await startWorld({ worker: true, env: { STATE_LEASE_MS: String(LEASE_MS), LIFECYCLE_WAIT_MS: '60000' } });
  ({ key: adminKey } = await createApiKey(world, { capabilities: [...ALL_CAPABILITIES] }));
  const host = `feed-${randomBytes(4).toString('hex')}.test`;
  const { workspace } = await createWorkspace(world.services, {
    name: 'Feed tenant',
    domains: [host],
    admin: { email: `owner-${host}@example.test`, password: `pw-${randomBytes(12).toString('hex')}` },
  });
  tenant = { id: workspace._id, host };
  [g1, g2] = await Promise.all([startGateway(world, children, { FEED_CUT_MS: '3000' }), startGateway(world, children, { FEED_CUT_MS: '3000' })]);
}, 300_000);

afterAll(async () => {
  await stopGateways(children);
  await world?.close();
});

const admin = () => bearer(adminKey);
const feedOf = async (gateway: Gateway) => {
  const answer = await call(gateway, 'GET', '/api/manage/v1/diagnostics', { headers: admin() });
  expect(answer.status).toBe(200);
  return (JSON.parse(answer.body) as { runtime: { stateFeed: { trusted: boolean; streamOpen: boolean } } }).runtime.stateFeed;
};
const publicList = (gateway: Gateway, host?: string) => call(gateway, 'GET', '/api/v1/content?limit=1', { host });
const setPublic = (gateway: Gateway, on: boolean) =>
  call(gateway, 'PATCH', '/api/manage/v1/settings', { headers: admin(), body: { api: { publicEnabled: on } } });

describe('state held by each gateway', () => {
  it('both gateways hold their state under a lease from the feed', async () => {
    expect(await feedOf(g1)).toMatchObject({ trusted: true, streamOpen: true });
    expect(await feedOf(g2)).toMatchObject({ trusted: true, streamOpen: true });
  });

  it(
    'a switch flipped, a key revoked, a role narrowed, a workspace suspended through gateway 1: the next request on gateway 2 sees it',
    { timeout: 180_000 },
    async () => {
      await eventually(async () => (await feedOf(g2)).trusted, 'gateway 2 trusted', 10_000);
      await scenarios(ROUNDS);
    },
  );

  it('gateway 2 frozen past its lease: the write waits for the lease, then gateway 2 is exact on waking', { timeout: 120_000 }, async () => {
    for (let round = 0; round < 2; round++) {
      await eventually(async () => (await feedOf(g2)).trusted, 'gateway 2 trusted', 10_000);
      expect((await publicList(g2)).status).toBe(200);
      g2.child.kill('SIGSTOP');
      try {
        const started = Date.now();
        expect((await setPublic(g1, false)).status).toBe(200);
        const waited = Date.now() - started;
        // The writer waited for the frozen gateway's lease to lapse (plus the skew allowance), not longer.
        expect(waited).toBeGreaterThan(300);
        expect(waited).toBeLessThan(LEASE_MS + 1000 + 4000);
      } finally {
        g2.child.kill('SIGCONT');
      }
      // Woken: its lease is stale by its own clock, so it reads rather than trusting memory.
      expect((await publicList(g2)).status).toBe(404);
      expect((await setPublic(g1, true)).status).toBe(200);
      expect((await publicList(g2)).status).toBe(200);
    }
    // It comes back to memory on its own (new session, empty caches).
    await eventually(async () => (await feedOf(g2)).trusted, 'gateway 2 trusted again', 10_000);
    await scenarios(1);
  });

  it('gateway 2 with its feed cut falls back to per-request reads (writes do not wait for it), then returns to memory', { timeout: 120_000 }, async () => {
    await eventually(async () => (await feedOf(g2)).trusted, 'gateway 2 trusted', 10_000);
    g2.child.kill('SIGUSR2');
    await eventually(async () => g2.output.includes('CUT'), 'cut acknowledged', 5000);
    expect(await feedOf(g2)).toMatchObject({ trusted: false });
    const started = Date.now();
    await scenarios(2);
    // Two rounds of eight writes; a cut gateway released its lease, so nobody waited for it.
    expect(Date.now() - started).toBeLessThan(60_000);
    await eventually(async () => (await feedOf(g2)).trusted, 'feed back', 15_000);
    await scenarios(1);
  });
});

let roleSeq = 0;

/** One round of every change kind through g1, each checked on g2's next request. */
async function scenarios(rounds: number) {
  for (let round = 0; round < rounds; round++) {
    // 1. The Public API switch.
    expect((await publicList(g2)).status).toBe(200);
    expect((await setPublic(g1, false)).status).toBe(200);
    expect((await publicList(g2)).status).toBe(404);
    expect((await setPublic(g1, true)).status).toBe(200);
    expect((await publicList(g2)).status).toBe(200);

    // 2. The Management API switch (admin surface on gateway 1, signed in there).
    const session = await signInOn(g1);
    const { key } = await createApiKey(world, { capabilities: ['content:read'] });
    const read = () => call(g2, 'GET', '/api/manage/v1/content?limit=1', { headers: bearer(key) });
    expect((await read()).status).toBe(200);
    const settings = { enabled: false, defaultRateLimitPerMin: 100_000, allowedOrigins: [] };
    expect((await call(g1, 'PUT', '/api/api-keys/settings', { headers: session, body: settings })).status).toBe(200);
    expect((await read()).status).toBe(403);
    expect((await call(g1, 'PUT', '/api/api-keys/settings', { headers: session, body: { ...settings, enabled: true } })).status).toBe(200);
    expect((await read()).status).toBe(200);

    // 3. A key revoked through gateway 1.
    const victim = await createApiKey(world, { capabilities: ['content:read'] });
    const readVictim = () => call(g2, 'GET', '/api/manage/v1/content?limit=1', { headers: bearer(victim.key) });
    expect((await readVictim()).status).toBe(200);
    expect((await call(g1, 'POST', `/api/api-keys/${victim.id}/revoke`, { headers: session, body: {} })).status).toBe(200);
    expect((await readVictim()).status).toBe(401);

    // 4. A role narrowed: the key of a user holding it loses the capability on the next request.
    const role = await call(g1, 'POST', '/api/manage/v1/roles', {
      headers: admin(),
      body: { name: `feed-role-${roleSeq++}-${randomBytes(3).toString('hex')}`, capabilities: ['content:read', 'settings:read'] },
    });
    expect(role.status).toBe(201);
    const roleId = (JSON.parse(role.body) as { id: string }).id;
    const user = await addUser(world, `u-${randomBytes(4).toString('hex')}@example.test`, roleId);
    const { key: userKey } = await createApiKey(world, { capabilities: ['content:read'], ownerEmail: user.email });
    const readAsUser = () => call(g2, 'GET', '/api/manage/v1/content?limit=1', { headers: bearer(userKey) });
    expect((await readAsUser()).status).toBe(200);
    expect((await call(g1, 'PATCH', `/api/manage/v1/roles/${roleId}`, { headers: admin(), body: { capabilities: ['settings:read'] } })).status).toBe(200);
    expect((await readAsUser()).status).toBe(403);

    // 5. A workspace suspended (and reactivated) through gateway 1: its host stops answering.
    expect((await publicList(g2, tenant.host)).status).toBe(200);
    expect((await call(g1, 'POST', `/api/manage/v1/tenants/${tenant.id}/suspend`, { headers: admin(), body: {} })).status).toBe(202);
    expect((await publicList(g2, tenant.host)).status).toBe(404);
    expect((await call(g1, 'POST', `/api/manage/v1/tenants/${tenant.id}/reactivate`, { headers: admin(), body: {} })).status).toBe(202);
    expect((await publicList(g2, tenant.host)).status).toBe(200);
  }
}

async function signInOn(gateway: Gateway): Promise<Record<string, string>> {
  const origin = 'http://localhost';
  // The administrator is a platform operator: it signs in with a second factor (the helper enrols it).
  const code = await signInCode(world);
  const answer = await new Promise<{ status: number; cookie: string }>((resolve, reject) => {
    void import('node:http').then(({ request }) => {
      const payload = JSON.stringify({ email: world.admin.email, password: world.admin.password, code });
      const req = request(
        { host: '127.0.0.1', port: gateway.port, method: 'POST', path: '/api/auth/login', headers: { origin, 'content-type': 'application/json' } },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, cookie: String(res.headers['set-cookie']?.[0] ?? '').split(';')[0] }));
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  });
  expect(answer.status).toBe(200);
  return { cookie: answer.cookie, origin };
}
