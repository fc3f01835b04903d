import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { addTestUser, createApiKey, defaultSiteContext, oauthTokensFor, openSession, signIn } from '../support/access.ts';
import { bearer } from './world-helpers.ts';
import { accessCollections } from '../../services/access/model.ts';
import { oauthCollections } from '../../services/oauth/model.ts';
import { hashPassword, verifyPassword } from '../../services/access/passwords.ts';
import { ALL_CAPABILITIES, CAPABILITIES } from '../../services/core/capabilities.ts';
import { invokeOperation } from '../../services/core/operation.ts';
import { updateUserOp } from '../../services/access/user-ops.ts';
import { siteContext } from '../support/access.ts';

/**
 * Issue 21, items 1, 2 and the password part of 7: platform rights reachable only through platform
 * rights, a grant never exceeds its granter, a new password ends what the old one opened.
 * World: the bootstrap administrator is the platform operator; `siteAdmin` is an administrator of
 * the same (platform) site who is not one.
 */
let world: World;
let operatorId: string;
let operatorKey: { key: string; id: string };
let siteAdmin: { id: string; email: string };
let siteAdminSession: { cookie: string; origin: string };
let siteAdminKey: string;
let hash: string;
const PASSWORD = 'the-shared-test-password';

beforeAll(async () => {
  world = await startWorld();
  const ctx = await defaultSiteContext(world);
  operatorId = (await accessCollections(ctx.db).users.findOne({ email: world.admin.email }))!._id;
  operatorKey = await createApiKey(world, { capabilities: [...ALL_CAPABILITIES], name: 'operator key' });
  hash = await hashPassword(PASSWORD);
  siteAdmin = await addTestUser(world, 'site-admin@example.test', { role: 'administrator', passwordHash: hash });
  siteAdminSession = await openSession(world, siteAdmin.id);
  siteAdminKey = (await createApiKey(world, { capabilities: [...CAPABILITIES], ownerEmail: siteAdmin.email })).key;
});
afterAll(async () => {
  await world?.close();
});

const db = () => world.services.workspaceDb({ dbName: world.defaultWorkspace.dbName });
const keyRow = (id: string) => accessCollections(db()).apiKeys.findOne({ _id: id });
const userRow = (id: string) => accessCollections(db()).users.findOne({ _id: id });
const auditOf = (keyId: string) => accessCollections(db()).audit.countDocuments({ keyId });
const manage = (key: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT', url: string, payload?: object) =>
  world.app.inject({ method, url: `/api/manage/v1${url}`, headers: bearer(key), ...(payload ? { payload } : {}) });
const asSession = (session: { cookie: string; origin: string }, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  world.app.inject({ method, url, headers: { cookie: session.cookie, origin: session.origin }, ...(payload ? { payload } : {}) });
const me = (session: { cookie: string }) => world.app.inject({ url: '/api/auth/me', headers: { cookie: session.cookie } });

function expectForbidden(response: { statusCode: number; json(): unknown }, what: string) {
  expect(response.statusCode, what).toBe(403);
  expect(response.json(), what).toEqual({ error: 'Forbidden' });
}

describe("escalation 1: a site administrator who is not an operator rotating the operator's key", () => {
  it('is refused with 403, changes nothing, and the old key still works', async () => {
    const before = await keyRow(operatorKey.id);
    const audits = await auditOf(operatorKey.id);
    expectForbidden(await asSession(siteAdminSession, 'POST', `/api/api-keys/${operatorKey.id}/rotate`), 'rotate');
    expect(await keyRow(operatorKey.id)).toEqual(before);
    expect(await auditOf(operatorKey.id)).toBe(audits);
    expect((await manage(operatorKey.key, 'GET', '/tenants')).statusCode).toBe(200);
  });

  it("refuses revoking, deleting and updating the operator's key the same way", async () => {
    const before = await keyRow(operatorKey.id);
    for (const [method, url, payload] of [
      ['POST', `/api/api-keys/${operatorKey.id}/revoke`],
      ['DELETE', `/api/api-keys/${operatorKey.id}`],
      ['PATCH', `/api/api-keys/${operatorKey.id}`, { name: 'mine now' }],
      ['PATCH', `/api/api-keys/${operatorKey.id}`, { allowedIps: ['10.9.9.9'] }],
      ['PATCH', `/api/api-keys/${operatorKey.id}`, { capabilities: ['content:read'] }],
    ] as const) {
      expectForbidden(await asSession(siteAdminSession, method, url, payload), `${method} ${url} ${JSON.stringify(payload)}`);
    }
    expect(await keyRow(operatorKey.id)).toEqual(before);
    expect((await manage(operatorKey.key, 'GET', '/tenants')).statusCode).toBe(200);
  });

  it('lets the operator rotate their own key (the old secret stops, the new one works)', async () => {
    const own = await createApiKey(world, { capabilities: ['platform:read'], name: 'rotated by its owner' });
    const rotated = await asSession(await openSession(world, operatorId), 'POST', `/api/api-keys/${own.id}/rotate`);
    expect(rotated.statusCode).toBe(200);
    expect((await manage(own.key, 'GET', '/tenants')).statusCode).toBe(401);
    expect((await manage(rotated.json().key, 'GET', '/tenants')).statusCode).toBe(200);
  });

  it("refuses rotating a key whose capabilities exceed the caller's, even when its owner is within reach", async () => {
    // The owner made a settings:manage key, then lost settings:manage: owner and caller now hold
    // the same, but rotating would hand over the key's dormant right should the owner regain it.
    const owner = await addTestUser(world, 'lost-a-right@example.test', { role: 'administrator', passwordHash: hash });
    const { id } = await createApiKey(world, { capabilities: ['settings:manage'], ownerEmail: owner.email });
    await accessCollections(db()).users.updateOne({ _id: owner.id }, { $set: { policy: { deny: ['settings:manage'] } } });
    const caller = await addTestUser(world, 'denied-settings@example.test', {
      role: 'administrator',
      policy: { deny: ['settings:manage'] },
      passwordHash: hash,
    });
    const before = await keyRow(id);
    expectForbidden(await asSession(await openSession(world, caller.id), 'POST', `/api/api-keys/${id}/rotate`), 'rotate');
    expect(await keyRow(id)).toEqual(before);
    // An administrator holding it may.
    expect((await asSession(siteAdminSession, 'POST', `/api/api-keys/${id}/rotate`)).statusCode).toBe(200);
  });
});

describe("escalation 2: a key with users:manage setting the operator's password", () => {
  it("is refused with 403 and the operator's old password still signs in", async () => {
    const before = await userRow(operatorId);
    expectForbidden(await manage(siteAdminKey, 'PATCH', `/users/${operatorId}`, { password: 'taken-over-password' }), 'site admin key');
    // The operator's own key without platform rights may not either: it would hand over the account.
    const narrow = (await createApiKey(world, { capabilities: ['users:read', 'users:manage'] })).key;
    expectForbidden(await manage(narrow, 'PATCH', `/users/${operatorId}`, { password: 'taken-over-password' }), "operator's narrow key");
    expect(await userRow(operatorId)).toEqual(before);
    expect(await verifyPassword('taken-over-password', before!.passwordHash)).toBe(false);
    const session = await signIn(world);
    expect((await me(session)).json().user.platformOperator).toBe(true);
  });

  it("refuses a site role every other change of an operator's account (role, policy, name, deletion)", async () => {
    const before = await userRow(operatorId);
    const sessions = await accessCollections(db()).sessions.countDocuments({ userId: operatorId });
    for (const [method, payload] of [
      ['PATCH', { role: 'viewer' }],
      ['PATCH', { policy: { deny: ['content:read'] } }],
      ['PATCH', { name: 'Mallory' }],
      ['DELETE', undefined],
    ] as const) {
      expectForbidden(await manage(siteAdminKey, method, `/users/${operatorId}`, payload), `${method} ${JSON.stringify(payload)}`);
    }
    expect(await userRow(operatorId)).toEqual(before);
    expect(await accessCollections(db()).sessions.countDocuments({ userId: operatorId })).toBe(sessions);
  });

  it("lets another operator change an operator's password", async () => {
    const target = await addTestUser(world, 'second-operator@example.test', { role: 'administrator', platformOperator: true, passwordHash: hash });
    const res = await manage(operatorKey.key, 'PATCH', `/users/${target.id}`, { password: 'a-new-operator-password' });
    expect(res.statusCode).toBe(200);
    expect(await verifyPassword('a-new-operator-password', (await userRow(target.id))!.passwordHash)).toBe(true);
  });
});

describe('a grant never exceeds its granter', () => {
  it('a users:read + users:manage key creates no administrator, no role and no policy beyond itself', async () => {
    const narrow = (await createApiKey(world, { capabilities: ['users:read', 'users:manage'] })).key;
    const { users, roles } = accessCollections(db());
    const counts = async () => [await users.countDocuments(), await roles.countDocuments()];
    const before = await counts();
    const refusedCreates = [
      ['/users', { email: 'new-admin@example.test', password: 'a-long-password-1', role: 'administrator' }],
      ['/users', { email: 'new-viewer@example.test', password: 'a-long-password-1' }],
      ['/roles', { name: 'Wider', capabilities: ['content:read'] }],
      ['/roles', { name: 'Wider', capabilities: ['users:read', 'site:admin'] }],
    ] as const;
    for (const [url, payload] of refusedCreates) expectForbidden(await manage(narrow, 'POST', url, payload), `${url} ${JSON.stringify(payload)}`);
    expect(await counts()).toEqual(before);

    // Within the ceiling it works: a role holding what the key holds, and a user with it.
    const role = await manage(narrow, 'POST', '/roles', { name: 'User readers', capabilities: ['users:read'] });
    expect(role.statusCode).toBe(201);
    const roleId = role.json().id;
    expectForbidden(
      await manage(narrow, 'POST', '/users', {
        email: 'granted@example.test',
        password: 'a-long-password-1',
        role: roleId,
        policy: { grant: ['content:delete'] },
      }),
      'policy grant beyond the key',
    );
    const created = await manage(narrow, 'POST', '/users', { email: 'reader@example.test', password: 'a-long-password-1', role: roleId });
    expect(created.statusCode).toBe(201);
    const userId = created.json().id;

    const [user, roleDoc] = [await userRow(userId), await roles.findOne({ _id: roleId })];
    for (const [url, payload] of [
      [`/users/${userId}`, { policy: { grant: ['settings:manage'] } }],
      [`/users/${userId}`, { role: 'administrator' }],
      [`/users/${userId}`, { role: 'editor', name: 'Raised' }],
      [`/roles/${roleId}`, { capabilities: ['users:read', 'settings:manage'] }],
    ] as const) {
      expectForbidden(await manage(narrow, 'PATCH', url, payload), `${url} ${JSON.stringify(payload)}`);
    }
    expect(await userRow(userId)).toEqual(user);
    expect(await roles.findOne({ _id: roleId })).toEqual(roleDoc);
    // Narrowing within the ceiling is allowed.
    expect((await manage(narrow, 'PATCH', `/users/${userId}`, { policy: { deny: ['users:read'] } })).statusCode).toBe(200);
  });

  it('reaches no user holding more than the caller: no role, policy, name, password or deletion', async () => {
    const narrow = (await createApiKey(world, { capabilities: ['users:read', 'users:manage'] })).key;
    const editor = await addTestUser(world, 'an-editor@example.test', { role: 'editor', passwordHash: hash });
    const before = await userRow(editor.id);
    for (const [method, payload] of [
      ['PATCH', { role: 'viewer' }],
      ['PATCH', { name: 'Renamed' }],
      ['PATCH', { password: 'taken-over-password' }],
      ['DELETE', undefined],
    ] as const) {
      expectForbidden(await manage(narrow, method, `/users/${editor.id}`, payload), `${method} ${JSON.stringify(payload)}`);
    }
    expect(await userRow(editor.id)).toEqual(before);
  });

  it('refuses a site role rewriting a custom role an operator holds; an operator may', async () => {
    const { roles } = accessCollections(db());
    const now = new Date();
    await roles.insertOne({
      _id: 'ops-role',
      siteId: (await defaultSiteContext(world)).site._id,
      name: 'Ops',
      description: '',
      capabilities: ['content:read'],
      createdAt: now,
      updatedAt: now,
    });
    await addTestUser(world, 'ops-role-holder@example.test', { role: 'ops-role', platformOperator: true, passwordHash: hash });
    const before = await roles.findOne({ _id: 'ops-role' });
    expectForbidden(await manage(siteAdminKey, 'PATCH', '/roles/ops-role', { capabilities: [] }), 'site admin');
    expect(await roles.findOne({ _id: 'ops-role' })).toEqual(before);
    expect((await manage(operatorKey.key, 'PATCH', '/roles/ops-role', { capabilities: [] })).statusCode).toBe(200);
  });

  it('makes an operator only with both platform rights', async () => {
    const manageOnly = (await createApiKey(world, { capabilities: ['platform:manage'] })).key;
    const plain = await addTestUser(world, 'would-be-operator@example.test', { role: 'viewer', passwordHash: hash });
    expectForbidden(await manage(manageOnly, 'PUT', `/operators/${plain.id}`), 'platform:manage only');
    expect((await userRow(plain.id))!.platformOperator).toBe(false);
    expect((await manage(operatorKey.key, 'PUT', `/operators/${plain.id}`)).statusCode).toBe(200);
  });
});

describe('a password change ends sessions and OAuth grants', () => {
  const liveGrants = (userId: string) => oauthCollections(db()).grants.countDocuments({ userId, revokedAt: null });

  async function signedInEverywhere(email: string) {
    const user = await addTestUser(world, email, { role: 'administrator', passwordHash: hash });
    const sessions = [await openSession(world, user.id), await openSession(world, user.id)];
    const tokens = await oauthTokensFor(world, user.id, ['content:read']);
    for (const session of sessions) expect((await me(session)).statusCode).toBe(200);
    expect((await world.app.inject({ url: '/api/manage/v1/content', headers: { ...bearer(tokens.access_token), host: 'localhost' } })).statusCode).toBe(200);
    return { user, sessions, tokens };
  }

  it('set by an administrator: every session, access token and refresh token of the user ends', async () => {
    const { user, sessions, tokens } = await signedInEverywhere('changed-by-admin@example.test');
    const admin = (await createApiKey(world, { capabilities: [...CAPABILITIES] })).key;
    // Not every change: a new name leaves them alone.
    expect((await manage(admin, 'PATCH', `/users/${user.id}`, { name: 'Renamed' })).statusCode).toBe(200);
    expect((await me(sessions[0])).statusCode).toBe(200);

    expect((await manage(admin, 'PATCH', `/users/${user.id}`, { password: 'a-brand-new-password' })).statusCode).toBe(200);
    for (const session of sessions) expect((await me(session)).statusCode).toBe(401);
    expect(await accessCollections(db()).sessions.countDocuments({ userId: user.id })).toBe(0);
    expect((await world.app.inject({ url: '/api/manage/v1/content', headers: { ...bearer(tokens.access_token), host: 'localhost' } })).statusCode).toBe(401);
    const refresh = await world.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', host: 'localhost' },
      payload: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: tokens.clientId }).toString(),
    });
    expect(refresh.statusCode).toBe(400);
    expect(refresh.json().error).toBe('invalid_grant');
    expect(await liveGrants(user.id)).toBe(0);
    // The new password signs in.
    expect((await me(await signIn(world, user.email, 'a-brand-new-password'))).statusCode).toBe(200);
  });

  it('set by the user through a session: the other sessions and the grants end, this session stays', async () => {
    // No route lets a session change its own password today (users.update is on the Management
    // API); the rule sits in the service, so it is run here with a session principal.
    const { user, sessions } = await signedInEverywhere('changed-by-self@example.test');
    const ctx = await siteContext(world, 'localhost', {
      kind: 'user',
      userId: user.id,
      sessionId: (sessions[0] as { sessionId: string }).sessionId,
      capabilities: new Set(CAPABILITIES),
      isPlatformOperator: false,
    });
    await invokeOperation(updateUserOp, ctx, { id: user.id, password: 'my-own-new-password' });
    expect((await me(sessions[0])).statusCode).toBe(200);
    expect((await me(sessions[1])).statusCode).toBe(401);
    expect(await liveGrants(user.id)).toBe(0);
  });
});
