import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { caller, createTenant, keyOnHost, operatorKey, tenantAdmin, type Call } from './support.ts';
import { CAPABILITIES } from '../../services/core/capabilities.ts';
import { eventually } from '../support/polling.ts';

const REDIRECT = 'http://127.0.0.1:8976/callback';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const form = (values: Record<string, string>) => new URLSearchParams(values).toString();

interface Side {
  host: string;
  key: string;
  entry: string;
  hook: string;
  cookie: string;
  origin: string;
  token: string;
  delivery: string;
}

/**
 * A cookie session, an OAuth token and the webhook delivery history of workspace A never read or
 * write workspace B (and back): Host spoofing, guessed ids, foreign cursors, foreign deliveries.
 */
describe('adversarial isolation: sessions, OAuth tokens, webhook deliveries', { timeout: 120_000 }, () => {
  let world: World;
  let call: Call;
  let operator: string;
  let port: string;
  const blank = (host: string): Side => ({ host, key: '', entry: '', hook: '', cookie: '', origin: '', token: '', delivery: '' });
  const a = blank('a.creds.example.test');
  const b = blank('b.creds.example.test');

  const inject = (method: string, url: string, headers: Record<string, string>, payload?: unknown) =>
    world.app.inject({ method: method as never, url, headers, payload: payload as never });
  /** The admin surface (/api/…) and the Management API with a cookie session, on `host`. */
  const asSession = (side: Side, host = side.host) => ({ cookie: side.cookie, origin: side.origin, host });
  const asToken = (side: Side, host = side.host) => ({ authorization: `Bearer ${side.token}`, host: `${host}:${port}` });

  async function signIn(side: Side) {
    const origin = `http://${side.host}`;
    const res = await inject('POST', '/api/auth/login', { host: side.host, origin }, { email: tenantAdmin.email, password: tenantAdmin.password });
    expect(res.statusCode).toBe(200);
    const line = [res.headers['set-cookie']].flat()[0]!;
    side.cookie = line.split(';')[0];
    side.origin = origin;
  }

  /** The OAuth code flow on the side's own host (consent by its signed-in administrator), bound to its Management API. */
  async function oauthToken(side: Side) {
    const host = `${side.host}:${port}`;
    const registered = await inject('POST', '/oauth/register', { host }, { client_name: `agent of ${side.host}`, redirect_uris: [REDIRECT] });
    expect(registered.statusCode).toBe(201);
    const clientId = registered.json().client_id;
    const verifier = randomBytes(32).toString('base64url');
    const resource = `http://${host}/api/manage/v1`;
    const query = form({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      state: 's',
      scope: 'content:read content:update content:delete settings:manage',
      resource,
    });
    const page = await inject('GET', `/oauth/authorize?${query}`, { host, cookie: side.cookie });
    expect(page.statusCode, page.body).toBe(200);
    const consent = /name="consent" value="([^"]+)"/.exec(page.body)![1].replace(/&quot;/g, '"');
    const approved = await inject(
      'POST',
      '/oauth/authorize',
      { ...FORM, host, cookie: side.cookie, origin: `http://${host}` },
      form({ consent, decision: 'approve' }),
    );
    expect(approved.statusCode).toBe(302);
    const code = new URL(approved.headers.location as string).searchParams.get('code')!;
    const token = await inject(
      'POST',
      '/oauth/token',
      { ...FORM, host },
      form({ grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: REDIRECT, code_verifier: verifier, resource }),
    );
    expect(token.statusCode, token.body).toBe(200);
    side.token = token.json().access_token;
  }

  const history = (side: Side, host = side.host, query = '') => inject('GET', `/api/webhooks/deliveries/history${query}`, asSession(side, host));

  beforeAll(async () => {
    world = await startWorld({ worker: true, env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', LIFECYCLE_WAIT_MS: '60000' } });
    port = new URL(await world.app.listen({ port: 0, host: '127.0.0.1' })).port;
    operator = await operatorKey(world);
    call = caller(world, () => operator);
    for (const side of [a, b]) {
      await createTenant(call, `Creds ${side.host}`, side.host);
      side.key = await keyOnHost(world, side.host, [...CAPABILITIES]);
      // Port 9 on loopback: nothing listens, every attempt fails fast and is recorded.
      side.hook = (
        await call('POST', '/webhooks', { name: 'h', url: 'http://127.0.0.1:9/h', events: ['content.created'] }, side.key, side.host)
      ).json().endpoint.id;
      await call('POST', '/webhooks', { name: 'h2', url: 'http://127.0.0.1:9/h2', events: ['user.created'] }, side.key, side.host);
      side.entry = (await call('POST', '/content', { title: `Secret of ${side.host}` }, side.key, side.host)).json().id;
      await call('POST', '/content', { title: `Second of ${side.host}` }, side.key, side.host);
      await signIn(side);
      await oauthToken(side);
    }
    for (const side of [a, b]) {
      const rows = await eventually(
        async () => {
          const data = (await history(side)).json().data as { deliveryId: string }[];
          return data.length > 0 && data;
        },
        `a delivery attempt recorded on ${side.host}`,
        60_000,
        200,
      );
      side.delivery = rows[0].deliveryId;
    }
  });
  afterAll(() => world?.close());

  // Cookie sessions work on the admin surface (/api/…), the one the admin UI uses.
  it("a cookie session of A is a generic 401 on B's hosts, for reads and writes, and changes nothing", async () => {
    expect((await inject('GET', '/api/webhooks', asSession(a))).statusCode).toBe(200);
    for (const url of ['/api/webhooks', '/api/auth/me', '/api/api-keys', '/api/webhooks/deliveries/history']) {
      const spoofed = await inject('GET', url, asSession(a, b.host));
      expect(spoofed.statusCode, url).toBe(401);
      expect(spoofed.json()).toEqual({ error: 'Unauthorized' });
    }
    // A write with A's cookie and A's origin sent to B's host gets no further (origin check or session).
    const write = await inject('PUT', `/api/webhooks/${b.hook}`, { ...asSession(a, b.host), 'content-type': 'application/json' }, { name: 'pwned' });
    expect([401, 403]).toContain(write.statusCode);
    expect(write.json()).toEqual({ error: write.statusCode === 401 ? 'Unauthorized' : 'Forbidden' });
    // Even with B's origin forged on top, A's session is unknown on B.
    const forged = await inject(
      'PUT',
      `/api/webhooks/${b.hook}`,
      { ...asSession(a, b.host), origin: `http://${b.host}`, 'content-type': 'application/json' },
      { name: 'pwned' },
    );
    expect(forged.statusCode).toBe(401);
    expect(
      (await call('GET', '/webhooks', undefined, b.key, b.host))
        .json()
        .data.map((h: { name: string }) => h.name)
        .sort(),
    ).toEqual(['h', 'h2']);
  });

  it("a cookie session of A meets B's guessed ids as 404 and B's cursors as 400", async () => {
    const json = { 'content-type': 'application/json' };
    expect((await inject('PUT', `/api/webhooks/${b.hook}`, { ...asSession(a), ...json }, { name: 'pwned' })).statusCode).toBe(404);
    expect((await inject('DELETE', `/api/webhooks/${b.hook}`, asSession(a))).statusCode).toBe(404);
    expect((await inject('POST', `/api/webhooks/${b.hook}/rotate-secret`, { ...asSession(a), ...json }, {})).statusCode).toBe(404);
    const bKeys = (await inject('GET', '/api/api-keys', asSession(b))).json().data as { id: string }[];
    expect(bKeys.length).toBeGreaterThan(0);
    expect((await inject('POST', `/api/api-keys/${bKeys[0].id}/revoke`, { ...asSession(a), ...json }, {})).statusCode).toBe(404);
    expect((await inject('GET', '/api/webhooks', asSession(a))).json().data.map((h: { id: string }) => h.id)).not.toContain(b.hook);
    const page = (await inject('GET', '/api/webhooks?limit=1', asSession(b))).json();
    expect(page.page.nextCursor).toBeTruthy();
    const foreign = await inject('GET', `/api/webhooks?limit=1&cursor=${encodeURIComponent(page.page.nextCursor)}`, asSession(a));
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json().error).toBeTruthy();
    // B is as it was: its endpoints, its key.
    expect(
      (await call('GET', '/webhooks', undefined, b.key, b.host))
        .json()
        .data.map((h: { name: string }) => h.name)
        .sort(),
    ).toEqual(['h', 'h2']);
    expect((await inject('GET', '/api/api-keys', asSession(b))).json().data.find((k: { id: string }) => k.id === bKeys[0].id).status).toBe('active');
  });

  it("an OAuth token of A is a 401 on B's hosts (Management API and MCP) and sees only A by id and cursor", async () => {
    const own = await inject('GET', '/api/manage/v1/content', asToken(a));
    expect(own.statusCode).toBe(200);
    expect(
      own
        .json()
        .data.map((e: { title: string }) => e.title)
        .sort(),
    ).toEqual([`Second of ${a.host}`, `Secret of ${a.host}`]);
    const spoofed = await inject('GET', '/api/manage/v1/content', asToken(a, b.host));
    expect(spoofed.statusCode).toBe(401);
    expect(spoofed.json()).toEqual({ error: 'Unauthorized' });
    expect(
      (await inject('PATCH', `/api/manage/v1/content/${b.entry}`, { ...asToken(a, b.host), 'content-type': 'application/json' }, { title: 'pwned' }))
        .statusCode,
    ).toBe(401);
    const mcp = await inject(
      'POST',
      '/api/mcp',
      { ...asToken(a, b.host), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    );
    expect(mcp.statusCode).toBe(401);

    expect((await inject('GET', `/api/manage/v1/content/${b.entry}`, asToken(a))).statusCode).toBe(404);
    expect(
      (await inject('PATCH', `/api/manage/v1/content/${b.entry}`, { ...asToken(a), 'content-type': 'application/json' }, { title: 'pwned' })).statusCode,
    ).toBe(404);
    expect((await inject('DELETE', `/api/manage/v1/content/${b.entry}`, asToken(a))).statusCode).toBe(404);
    const page = (await inject('GET', '/api/manage/v1/content?limit=1', asToken(b))).json();
    expect((await inject('GET', `/api/manage/v1/content?limit=1&cursor=${encodeURIComponent(page.page.nextCursor)}`, asToken(a))).statusCode).toBe(400);
    expect((await call('GET', `/content/${b.entry}`, undefined, b.key, b.host)).json().title).toBe(`Secret of ${b.host}`);
  });

  it("webhook delivery history and redelivery of A are out of B's reach (and back)", async () => {
    for (const [own, other] of [
      [a, b],
      [b, a],
    ]) {
      const rows = (await history(own)).json().data as { deliveryId: string; endpointId: string }[];
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.every((r) => r.endpointId === own.hook)).toBe(true);
      expect(rows.map((r) => r.deliveryId)).not.toContain(other.delivery);
      // Filtering by the other workspace's endpoint id finds nothing.
      expect((await history(own, own.host, `?endpointId=${other.hook}`)).json().data).toEqual([]);
      // The session of `own` on the other's host: generic 401.
      expect((await history(own, other.host)).statusCode).toBe(401);
    }
    const before = (await history(b)).json().data.length;
    const foreign = await inject('POST', `/api/webhooks/deliveries/${b.delivery}/redeliver`, asSession(a));
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ error: expect.any(String) });
    const spoofed = await inject('POST', `/api/webhooks/deliveries/${b.delivery}/redeliver`, asSession(a, b.host));
    expect(spoofed.statusCode).toBe(403); // A's origin on B's host: refused before the session is looked at
    const forged = await inject('POST', `/api/webhooks/deliveries/${b.delivery}/redeliver`, { ...asSession(a, b.host), origin: `http://${b.host}` });
    expect(forged.statusCode).toBe(401);
    // Nothing was queued for B: its history did not grow (a redelivery would add an attempt quickly).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await history(b)).json().data.length).toBe(before);
    // A's own redelivery works: the control that the route does redeliver.
    const mine = await inject('POST', `/api/webhooks/deliveries/${a.delivery}/redeliver`, asSession(a));
    expect(mine.statusCode).toBe(202);
    expect(mine.json().delivery.redeliveryOf).toBe(a.delivery);
  });
});
