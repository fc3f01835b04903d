import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startWorld, type World } from '../support/world.ts';
import { setManagementApi, signIn } from '../support/access.ts';
import { MAX_CLIENTS_PER_SITE, UNUSED_CLIENT_TTL_MS } from '../../services/oauth/clients.ts';
import { oauthCollections } from '../../services/oauth/model.ts';
import { REGISTRATIONS_PER_IP_PER_MIN } from '../../services/http/oauth.ts';

const REDIRECT = 'http://127.0.0.1:8976/callback';
const form = (values: Record<string, string>) => new URLSearchParams(values).toString();
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe('OAuth 2.1 for agent clients', () => {
  let world: World;
  let base: string;
  let session: { cookie: string; origin: string };
  let clientId: string;

  beforeAll(async () => {
    world = await startWorld();
    base = (await world.app.listen({ port: 0, host: '127.0.0.1' })).replace('127.0.0.1', 'localhost');
    session = await signIn(world);
    await setManagementApi(world, true);
    // Tokens are bound to the resource URL, so every call below uses the listening host:port.
    const host = new URL(base).host;
    const inject = world.app.inject.bind(world.app);
    world.app.inject = ((options: Record<string, any>) => inject({ ...options, headers: { host, ...options.headers } })) as never;
    const registered = await world.app.inject({
      method: 'POST',
      url: '/oauth/register',
      payload: { client_name: 'Test agent', redirect_uris: [REDIRECT] },
    });
    expect(registered.statusCode).toBe(201);
    clientId = registered.json().client_id;
  });
  afterAll(() => world?.close());

  /** Runs the browser part of the flow (consent) and returns the code and the PKCE verifier. */
  async function authorize(extra: Record<string, string> = {}) {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const query = form({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'xyz',
      ...extra,
    });
    const page = await world.app.inject({ url: `/oauth/authorize?${query}`, headers: { cookie: session.cookie } });
    if (page.statusCode !== 200) throw new Error(`${page.statusCode} ${page.body} ${page.headers.location ?? ''}`);
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    const consent = /name="consent" value="([^"]+)"/.exec(page.body)![1];
    const approved = await world.app.inject({
      method: 'POST',
      url: '/oauth/authorize',
      headers: { ...FORM, cookie: session.cookie, origin: session.origin },
      payload: form({ consent: consent.replace(/&quot;/g, '"'), decision: 'approve' }),
    });
    expect(approved.statusCode).toBe(302);
    const location = new URL(approved.headers.location as string);
    expect(location.origin + location.pathname).toBe(REDIRECT);
    expect(location.searchParams.get('state')).toBe('xyz');
    return { code: location.searchParams.get('code')!, verifier };
  }

  const token = (values: Record<string, string>) => world.app.inject({ method: 'POST', url: '/oauth/token', headers: FORM, payload: form(values) });

  it('publishes discovery metadata, and the MCP 401 points at it', async () => {
    const resource = (await world.app.inject({ url: '/.well-known/oauth-protected-resource/api/mcp' })).json();
    expect(resource.resource).toMatch(/\/api\/mcp$/);
    const server = (await world.app.inject({ url: '/.well-known/oauth-authorization-server' })).json();
    expect(server.code_challenge_methods_supported).toEqual(['S256']);
    expect(resource.authorization_servers).toEqual([server.issuer]);

    const denied = await world.app.inject({ method: 'POST', url: '/api/mcp', payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(denied.statusCode).toBe(401);
    expect(denied.headers['www-authenticate']).toContain('resource_metadata="');
  });

  it('sends a visitor without a session to sign in first', async () => {
    const response = await world.app.inject({
      url: `/oauth/authorize?${form({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: 'a'.repeat(43), code_challenge_method: 'S256' })}`,
    });
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toMatch(/^\/admin\?next=/);
  });

  it('issues tokens for a PKCE code, limited to the consented scope, usable by an MCP client', async () => {
    const { code, verifier } = await authorize({ scope: 'users:read' });
    const issued = await token({ grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: REDIRECT, code_verifier: verifier });
    expect(issued.statusCode).toBe(200);
    const tokens = issued.json();
    expect(tokens.scope).toBe('users:read');

    const client = new Client({ name: 'oauth-agent', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${tokens.access_token}` } } }),
    );
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('users_list');
    expect(names).not.toContain('users_create');
    await client.close();

    // Bound to the MCP endpoint, the token is no Management API credential.
    const manage = await world.app.inject({ url: '/api/manage/v1/users', headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(manage.statusCode).toBe(401);
  });

  it('binds a token to the Management API when that is the requested resource', async () => {
    const resource = `${base}/api/manage/v1`;
    const { code, verifier } = await authorize({ scope: 'users:read', resource });
    const tokens = (
      await token({ grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: REDIRECT, code_verifier: verifier, resource })
    ).json();
    const users = await world.app.inject({ url: '/api/manage/v1/users', headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(users.statusCode).toBe(200);
    expect(users.headers.ratelimit).toBeDefined();
    const beyond = await world.app.inject({
      method: 'POST',
      url: '/api/manage/v1/users',
      headers: { authorization: `Bearer ${tokens.access_token}` },
      payload: { email: 'x@example.test', password: 'correct horse battery staple' },
    });
    expect(beyond.statusCode).toBe(403);
  });

  it('refuses a wrong PKCE verifier and a replayed code, and revokes the grant on replay', async () => {
    const { code, verifier } = await authorize();
    const wrong = await token({ grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: REDIRECT, code_verifier: 'x'.repeat(43) });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().error).toBe('invalid_grant');
    // The code was spent by the failed attempt: a retry with the right verifier fails too.
    const retry = await token({ grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: REDIRECT, code_verifier: verifier });
    expect(retry.json().error).toBe('invalid_grant');

    const second = await authorize();
    const first = await token({
      grant_type: 'authorization_code',
      code: second.code,
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_verifier: second.verifier,
    });
    expect(first.statusCode).toBe(200);
    const replay = await token({
      grant_type: 'authorization_code',
      code: second.code,
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_verifier: second.verifier,
    });
    expect(replay.json().error).toBe('invalid_grant');
    const afterReplay = await world.app.inject({
      method: 'POST',
      url: '/api/mcp',
      headers: { authorization: `Bearer ${first.json().access_token}`, accept: 'application/json, text/event-stream' },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    expect(afterReplay.statusCode).toBe(401);
  });

  it('rotates refresh tokens and treats reuse of an old one as theft', async () => {
    const { code, verifier } = await authorize();
    const tokens = (await token({ grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: REDIRECT, code_verifier: verifier })).json();
    const rotated = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json().refresh_token).not.toBe(tokens.refresh_token);
    const reused = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId });
    expect(reused.json().error).toBe('invalid_grant');
    const revokedToo = await token({ grant_type: 'refresh_token', refresh_token: rotated.json().refresh_token, client_id: clientId });
    expect(revokedToo.json().error).toBe('invalid_grant');
  });

  it('refuses bad requests without issuing anything', async () => {
    const unknownClient = await world.app.inject({
      url: `/oauth/authorize?${form({ response_type: 'code', client_id: 'nope', redirect_uri: REDIRECT })}`,
      headers: { cookie: session.cookie },
    });
    expect(unknownClient.statusCode).toBe(400);
    expect(unknownClient.json().error).toBeTruthy();

    const badRegistration = await world.app.inject({ method: 'POST', url: '/oauth/register', payload: { redirect_uris: ['http://evil.example/cb'] } });
    expect(badRegistration.statusCode).toBe(400);

    const noOrigin = await world.app.inject({
      method: 'POST',
      url: '/oauth/authorize',
      headers: { ...FORM, cookie: session.cookie },
      payload: form({ consent: 'x.y', decision: 'approve' }),
    });
    expect(noOrigin.statusCode).toBe(403);

    const forged = await world.app.inject({
      method: 'POST',
      url: '/oauth/authorize',
      headers: { ...FORM, cookie: session.cookie, origin: session.origin },
      payload: form({ consent: 'eyJ1IjoiYSJ9.forged', decision: 'approve' }),
    });
    expect(forged.statusCode).toBe(400);

    const grants = await world.services.mongo.db(world.defaultWorkspace.dbName).collection('oauth_grants').countDocuments({});
    const unsupported = await token({ grant_type: 'password', username: 'a', password: 'b' });
    expect(unsupported.json().error).toBe('unsupported_grant_type');
    expect(await world.services.mongo.db(world.defaultWorkspace.dbName).collection('oauth_grants').countDocuments({})).toBe(grants);
  });

  describe('no open redirect at /oauth/authorize', () => {
    const FOREIGN = 'https://attacker.example/cb';
    let foreignClient: string;
    const challenge = 'a'.repeat(43);
    const authorizeUrl = (values: Record<string, string>) => `/oauth/authorize?${form(values)}`;
    const valid = () => ({
      response_type: 'code',
      client_id: foreignClient,
      redirect_uri: FOREIGN,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 's',
    });

    beforeAll(async () => {
      // Anyone may register a client with a redirect URI of their own, before anyone signs in.
      const registered = await world.app.inject({ method: 'POST', url: '/oauth/register', remoteAddress: '127.0.0.21', payload: { redirect_uris: [FOREIGN] } });
      expect(registered.statusCode).toBe(201);
      foreignClient = registered.json().client_id;
    });

    it('answers every error itself (400, no Location), signed in or not', async () => {
      const bad: Array<Record<string, string>> = [
        { ...valid(), response_type: 'token' },
        { ...valid(), code_challenge: 'short' },
        { ...valid(), code_challenge_method: 'plain' },
        { ...valid(), resource: 'https://attacker.example/api' },
        { ...valid(), state: 'x'.repeat(501) },
      ];
      for (const headers of [{}, { cookie: session.cookie }]) {
        for (const values of bad) {
          const response = await world.app.inject({ url: authorizeUrl(values), headers });
          expect(response.statusCode, JSON.stringify(values)).toBe(400);
          expect(response.headers.location).toBeUndefined();
          expect(response.json().error).toMatch(/^invalid_/);
        }
      }
      // A scope beyond the signed-in user's rights: refused here too, not sent to the client.
      const beyond = await world.app.inject({ url: authorizeUrl({ ...valid(), scope: 'nonexistent:capability' }), headers: { cookie: session.cookie } });
      expect(beyond.statusCode).toBe(400);
      expect(beyond.headers.location).toBeUndefined();
      expect(beyond.json().error).toBe('invalid_scope');
    });

    it('accepts only a redirect_uri equal to a registered one', async () => {
      for (const redirect of [`${FOREIGN}/more`, `${FOREIGN}?next=x`, 'https://attacker.example/', 'https://attacker.example/CB', REDIRECT]) {
        for (const headers of [{}, { cookie: session.cookie }]) {
          const response = await world.app.inject({ url: authorizeUrl({ ...valid(), redirect_uri: redirect }), headers });
          expect(response.statusCode, redirect).toBe(400);
          expect(response.headers.location).toBeUndefined();
        }
      }
      // Repeated parameters are no way around it either.
      const repeated = await world.app.inject({ url: `${authorizeUrl(valid())}&redirect_uri=${encodeURIComponent('https://elsewhere.example/')}` });
      expect(repeated.statusCode).toBe(400);
      expect(repeated.headers.location).toBeUndefined();
    });

    it('sends a visitor only to sign in, at a path of this origin that leads back to the request', async () => {
      const response = await world.app.inject({ url: authorizeUrl(valid()) });
      expect(response.statusCode).toBe(302);
      const location = String(response.headers.location);
      expect(location).toMatch(/^\/admin\?next=/);
      const next = new URL(location, 'http://site.test').searchParams.get('next')!;
      expect(next.startsWith('/oauth/authorize?')).toBe(true);
      expect(new URL(next, 'http://site.test').origin).toBe('http://site.test');
      expect(Object.fromEntries(new URL(next, 'http://site.test').searchParams)).toEqual(valid());
      // The signed-in user sees the consent page, which names where the decision will send them.
      const page = await world.app.inject({ url: next, headers: { cookie: session.cookie } });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('https://attacker.example');
    });
  });

  describe('bounded client registration', () => {
    const collections = () => oauthCollections(world.services.mongo.db(world.defaultWorkspace.dbName));
    const db = () => collections().clients;
    const register = (payload: unknown, remoteAddress: string) =>
      world.app.inject({ method: 'POST', url: '/oauth/register', remoteAddress, payload: payload as Record<string, unknown> });

    it('refuses oversized or unsafe metadata with 400, storing nothing', async () => {
      const before = await db().countDocuments();
      const long = `https://agent.example/${'a'.repeat(2_000)}`;
      const cases: unknown[] = [
        { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://agent.example/cb${i}`) },
        { redirect_uris: [long] },
        { redirect_uris: [REDIRECT], client_name: 'n'.repeat(201) },
        { redirect_uris: [] },
        { redirect_uris: ['javascript:alert(1)'] },
        { redirect_uris: ['http://agent.example/cb'] },
        { redirect_uris: ['https://user:pw@agent.example/cb'] },
        { redirect_uris: ['https://agent.example/cb#frag'] },
      ];
      for (const [index, payload] of cases.entries()) {
        // Each from an address of its own: this test is about the metadata, not the rate.
        const response = await register(payload, `127.0.1.${index + 1}`);
        expect(response.statusCode, JSON.stringify(payload).slice(0, 80)).toBe(400);
        expect(response.json().error).toBe('invalid_client_metadata');
      }
      const huge = await register({ redirect_uris: [REDIRECT], client_name: 'x'.repeat(64 * 1024) }, '127.0.1.99');
      expect(huge.statusCode).toBe(413);
      expect(await db().countDocuments()).toBe(before);
    });

    it(`limits registrations to ${REGISTRATIONS_PER_IP_PER_MIN} per IP and minute (429, nothing stored beyond it)`, async () => {
      const before = await db().countDocuments();
      const answers = [];
      for (let i = 0; i < 2 * REGISTRATIONS_PER_IP_PER_MIN + 1; i += 1)
        answers.push(await register({ redirect_uris: [REDIRECT], client_name: `burst ${i}` }, '127.0.2.1'));
      // Twice the limit and one: even if a window turns over during the burst, one window is over its limit.
      const created = answers.filter((a) => a.statusCode === 201).length;
      const refused = answers.filter((a) => a.statusCode === 429);
      expect(created + refused.length).toBe(answers.length);
      expect(refused.length).toBeGreaterThanOrEqual(1);
      expect(refused[0].json()).toEqual({ error: 'Too many requests' });
      expect(Number(refused[0].headers['retry-after'])).toBeGreaterThan(0);
      expect(await db().countDocuments()).toBe(before + created);
      // Another address is not affected.
      expect((await register({ redirect_uris: [REDIRECT] }, '127.0.2.2')).statusCode).toBe(201);
    });

    it(`keeps at most ${MAX_CLIENTS_PER_SITE} clients per site; unused ones expire after a day, granted ones stay`, async () => {
      const siteId = (await db().findOne({}))!.siteId;
      const now = world.services.clock.now();
      const old = new Date(now.getTime() - UNUSED_CLIENT_TTL_MS - 60_000);
      const filler = `filler-${Date.now()}-`;
      try {
        const existing = await db().countDocuments({ siteId });
        // Fill the site to its cap, with clients just registered (not yet expired).
        await db().insertMany(
          Array.from({ length: MAX_CLIENTS_PER_SITE - existing }, (_, i) => ({
            _id: `${filler}${i}`,
            siteId,
            name: 'filler',
            redirectUris: [REDIRECT],
            createdAt: now,
            grantedAt: null,
          })),
        );
        const full = await register({ redirect_uris: [REDIRECT] }, '127.0.3.1');
        expect(full.statusCode).toBe(429);
        expect(Number(full.headers['retry-after'])).toBeGreaterThan(0);
        expect(await db().countDocuments({ siteId })).toBe(MAX_CLIENTS_PER_SITE);

        // A day later the unused ones are gone at the next registration; the one with a grant stays.
        await db().updateMany({ _id: { $regex: `^${filler}` } }, { $set: { createdAt: old } });
        await db().updateOne({ _id: `${filler}0` }, { $set: { grantedAt: old } });
        // A client stored before grants were recorded on it, whose grant exists: kept too.
        await db().updateOne({ _id: `${filler}1` }, { $unset: { grantedAt: '' } });
        await collections().grants.insertOne({
          _id: `${filler}grant`,
          siteId,
          clientId: `${filler}1`,
          userId: 'u',
          scope: [],
          resource: 'r',
          createdAt: old,
          revokedAt: null,
        });
        const after = await register({ redirect_uris: [REDIRECT] }, '127.0.3.1');
        expect(after.statusCode).toBe(201);
        expect(await db().countDocuments({ _id: { $regex: `^${filler}` } })).toBe(2);
        expect((await db().findOne({ _id: `${filler}1` }))?.grantedAt).toBeInstanceOf(Date);
        // Its own first grant makes a client permanent: the consent flow marks it.
        const { code } = await authorize();
        expect(code).toBeTruthy();
        expect((await db().findOne({ _id: clientId }))?.grantedAt).toBeInstanceOf(Date);
      } finally {
        await db().deleteMany({ _id: { $regex: `^${filler}` } });
        await collections().grants.deleteMany({ _id: `${filler}grant` });
      }
    });
  });
});
