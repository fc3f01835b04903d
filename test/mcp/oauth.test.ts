import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startWorld, type World } from '../support/world.ts';
import { setManagementApi, signIn } from '../support/access.ts';

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

  const token = (values: Record<string, string>) =>
    world.app.inject({ method: 'POST', url: '/oauth/token', headers: FORM, payload: form(values) });

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
    const first = await token({ grant_type: 'authorization_code', code: second.code, client_id: clientId, redirect_uri: REDIRECT, code_verifier: second.verifier });
    expect(first.statusCode).toBe(200);
    const replay = await token({ grant_type: 'authorization_code', code: second.code, client_id: clientId, redirect_uri: REDIRECT, code_verifier: second.verifier });
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
});
