import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { addLocalWorkspace, startWorld, type World } from '../support/world.ts';
import { addTestUser, createApiKey, openSession, signIn, siteContext } from '../support/access.ts';
import { bearer } from './world-helpers.ts';
import { accessCollections } from '../../services/access/model.ts';
import { hashPassword } from '../../services/access/passwords.ts';
import { BUILT_IN_ROLES } from '../../services/access/roles.ts';
import {
  ALL_CAPABILITIES,
  CAPABILITIES,
  isPlatformCapability,
  PLATFORM_CAPABILITIES,
  requiredCapabilities,
  type Capability,
  type WorkspaceCapability,
} from '../../services/core/capabilities.ts';
import { openApiPath, type Operation } from '../../services/core/operation.ts';

/**
 * The privilege matrix of issue 21, over the registry as mounted (every Management-surface and
 * admin-surface operation; nothing hand-listed):
 *
 * 1. Capability sets. Each operation that needs a principal is called by: nobody (401), a principal
 *    holding no capability (403 unless the rule is `authenticated`), one holding exactly the
 *    required ones, and, per required capability, one holding every capability but that one (403).
 *    Management operations are called with keys, admin ones with sessions. A session's platform
 *    rights come only from the operator flag, which gives both: "exactly platform:read" is then
 *    both platform rights. Key scope is not part of the gate (it is checked in the handler on the
 *    documents, 401 by contract 7), so every key here is unscoped.
 *    Every call carries the query parameter `$matrix`, which `parseInput` refuses (400) and which
 *    is read only after `authorize`: a 400 naming it proves the gate let the call through, and no
 *    handler runs (nothing is created, no workflow starts).
 * 2. Roles, against the platform operations and the operations on an operator's account or keys:
 *    - site editor / site administrator: the `editor` / `administrator` of a tenant workspace's site;
 *    - operator of the site: an `administrator` of the platform workspace's own site (the site the
 *      operators are users of) who is not a platform operator — the role the escalations started from;
 *    - operator of the platform: a user of that site with the operator flag.
 *    Each role calls with a session (admin surface) or a key holding all of its capabilities
 *    (Management API), on its own site's host.
 */
let world: World;
let passwordHash: string;
const PASSWORD = 'the-matrix-password';
const TENANT = 'tenant.matrix.test';

const BASE = { manage: '/api/manage/v1', admin: '/api' } as const;
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

beforeAll(async () => {
  world = await startWorld();
  passwordHash = await hashPassword(PASSWORD);
});
afterAll(async () => {
  await world?.close();
});

const registry = () => world.services.features.flatMap((feature) => feature.operations);
const surfaceOf = (operation: Operation) => operation.surface as keyof typeof BASE;
const gated = () => registry().filter((op) => (op.surface === 'manage' || op.surface === 'admin') && op.requires !== 'public');

/** The operation's URL with every path parameter filled in, plus the parameter the parser refuses. */
function probeUrl(operation: Operation, params: Record<string, string> = {}, probe = true): string {
  const path = operation.path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => encodeURIComponent(params[name] ?? `matrix-${name}`));
  return `${BASE[surfaceOf(operation)]}${path}${probe ? '?%24matrix=1' : ''}`;
}

type Credential =
  { kind: 'key'; key: string; host: string } | { kind: 'session'; cookie: string; origin: string; host: string } | { kind: 'nobody'; host: string };

function call(operation: Operation, as: Credential, options: { params?: Record<string, string>; payload?: object; probe?: boolean } = {}) {
  const headers: Record<string, string> = { host: as.host };
  if (as.kind === 'key') Object.assign(headers, bearer(as.key));
  if (as.kind === 'session') Object.assign(headers, { cookie: as.cookie, origin: as.origin });
  return world.app.inject({
    method: operation.method as Method,
    url: probeUrl(operation, options.params, options.probe ?? !options.payload),
    headers,
    ...(options.payload ? { payload: options.payload } : {}),
  });
}

const label = (operation: Operation, who: string) => `${operation.id} (${operation.method} ${openApiPath(operation.path)}) as ${who}`;

/** The gate let it through: the parser's refusal of `$matrix`, never an access answer. */
function expectPassed(response: LightMyRequestResponse, what: string) {
  expect(response.statusCode, `${what}: ${response.body}`).toBe(400);
  expect(response.json().error, what).toMatch(/\$matrix/);
}
function expectStatus(response: LightMyRequestResponse, status: 401 | 403, what: string) {
  expect(response.statusCode, `${what}: ${response.body}`).toBe(status);
  expect(response.json(), what).toEqual({ error: status === 401 ? 'Unauthorized' : 'Forbidden' });
}

describe('privilege matrix: capability sets, every operation of the registry', () => {
  const keys = new Map<string, Promise<string>>();
  const sessions = new Map<string, Promise<Credential>>();
  let made = 0;

  /** A key of the platform operator (who holds everything) with exactly these capabilities. */
  function keyWith(capabilities: readonly Capability[], tag = ''): Promise<Credential> {
    const id = `${tag} ${[...capabilities].sort().join(' ')}`;
    if (!keys.has(id))
      keys.set(
        id,
        createApiKey(world, { capabilities: [...capabilities], name: `matrix ${id || 'none'}` }).then((k) => k.key),
      );
    return keys.get(id)!.then((key) => ({ kind: 'key', key, host: 'localhost' }));
  }

  /**
   * A session of a user holding these capabilities. Platform rights come only from the operator
   * flag, which gives both: a set needing one of them is met with the flag (`atLeast`: the closest
   * superset), a set lacking one without it (the closest subset).
   */
  function sessionWith(capabilities: readonly Capability[], atLeast: boolean, tag = ''): Promise<Credential> {
    const workspace = capabilities.filter((c) => !isPlatformCapability(c)) as WorkspaceCapability[];
    const platform = capabilities.filter(isPlatformCapability);
    const platformOperator = atLeast ? platform.length > 0 : platform.length === PLATFORM_CAPABILITIES.length;
    const id = `${tag} ${platformOperator} ${[...workspace].sort().join(' ')}`;
    if (!sessions.has(id)) {
      sessions.set(
        id,
        (async () => {
          const user = await addTestUser(world, `matrix-${(made += 1)}@example.test`, { capabilities: workspace, platformOperator, passwordHash });
          return { kind: 'session' as const, ...(await openSession(world, user.id)), host: 'localhost' };
        })(),
      );
    }
    return sessions.get(id)!;
  }

  // A heavy operation's callers are its own: the heavy budget (HEAVY_LIMIT_PER_MIN per caller) would
  // otherwise refuse the eleventh heavy operation of a shared principal with 429 before its 403.
  const principalWith = (operation: Operation, capabilities: readonly Capability[], atLeast = false) => {
    const tag = operation.heavy ? operation.id : '';
    return operation.surface === 'manage' ? keyWith(capabilities, tag) : sessionWith(capabilities, atLeast, tag);
  };

  it('answers each operation as its declared requirement says', { timeout: 120_000 }, async () => {
    const operations = gated();
    // The registry is what is mounted: both surfaces, platform routes and the operator console included.
    expect(operations.length).toBeGreaterThan(150);
    expect(operations.some((op) => op.surface === 'admin' && requiredCapabilities(op.requires).some(isPlatformCapability))).toBe(true);
    const nobody: Credential = { kind: 'nobody', host: 'localhost' };
    // The first key switches the Management API on (while it is off, everybody gets 403 there).
    await keyWith([]);

    // One operation's calls at a time, its principals side by side (each call is independent).
    for (const operation of operations) {
      const required = requiredCapabilities(operation.requires);
      const needsCapability = operation.requires !== 'authenticated';
      const cases: Array<[string, Promise<Credential> | Credential, 'pass' | 401 | 403]> = [
        ['nobody', nobody, 401],
        ['a principal with no capability', principalWith(operation, []), needsCapability ? 403 : 'pass'],
      ];
      if (needsCapability) {
        cases.push([`exactly ${required.join(' + ')}`, principalWith(operation, required, true), 'pass']);
        for (const missing of required) {
          cases.push([
            `everything but ${missing}`,
            principalWith(
              operation,
              ALL_CAPABILITIES.filter((c) => c !== missing),
            ),
            403,
          ]);
        }
      }
      await Promise.all(
        cases.map(async ([who, credential, expected]) => {
          const response = await call(operation, await credential);
          if (expected === 'pass') expectPassed(response, label(operation, who));
          else expectStatus(response, expected, label(operation, who));
        }),
      );
    }
  });
});

describe('privilege matrix: roles against the platform and the accounts of operators', () => {
  interface Role {
    name: string;
    platform: boolean;
    /** Its account, keys and the operators' live on another site: their ids are unknown there. */
    otherSite: boolean;
    key: Credential;
    session: Credential;
  }
  const roles: Role[] = [];

  beforeAll(async () => {
    const tenantAdmin = { email: 'admin@tenant.matrix.test', password: PASSWORD };
    await addLocalWorkspace(world, TENANT, tenantAdmin);
    const editor = await addTestUser(world, 'editor@tenant.matrix.test', { role: 'editor', passwordHash, host: TENANT });
    const siteOperator = await addTestUser(world, 'site-operator@example.test', { role: 'administrator', passwordHash });
    const idOf = async (email: string, host: string) => {
      const ctx = await siteContext(world, host);
      return (await accessCollections(ctx.db).users.findOne({ siteId: ctx.site._id, email }))!._id;
    };
    const make = async (name: string, email: string, host: string, capabilities: readonly Capability[], platform: boolean) => {
      const { key } = await createApiKey(world, { capabilities: [...capabilities], ownerEmail: email, host, name });
      const session = await openSession(world, await idOf(email, host), host);
      roles.push({ name, platform, otherSite: host !== 'localhost', key: { kind: 'key', key, host }, session: { kind: 'session', ...session, host } });
    };
    await make('site editor', editor.email, TENANT, BUILT_IN_ROLES.editor.capabilities, false);
    await make('site administrator', tenantAdmin.email, TENANT, CAPABILITIES, false);
    await make('operator of the site', siteOperator.email, 'localhost', CAPABILITIES, false);
    await make('operator of the platform', world.admin.email, 'localhost', ALL_CAPABILITIES, true);
  });

  const as = (role: Role, operation: Operation) => (operation.surface === 'manage' ? role.key : role.session);

  it('reaches the platform operations only as an operator of the platform', async () => {
    const platformOps = gated().filter((op) => requiredCapabilities(op.requires).some(isPlatformCapability));
    expect(platformOps.length).toBeGreaterThan(20);
    for (const operation of platformOps) {
      for (const role of roles) {
        const response = await call(operation, as(role, operation));
        if (role.platform) expectPassed(response, label(operation, role.name));
        else expectStatus(response, 403, label(operation, role.name));
      }
    }
  });

  /**
   * Every change of an account or of a key, found in the registry by its path: users by id, keys
   * by id, the operator flag. Each gets the bodies that exercise it.
   */
  const ACCOUNT_PATHS = /^\/(users\/:id|api-keys\/:id(\/[a-z]+)?|operators\/:userId)$/;
  const BODIES: Record<string, Array<object | undefined>> = {
    'users.update': [{ password: 'taken-over-password' }, { role: 'viewer' }, { policy: { deny: ['content:read'] } }, { name: 'Mallory' }],
    'users.delete': [undefined],
    'apiKeys.update': [{ name: 'mine now' }, { allowedIps: ['10.9.9.9'] }],
    'apiKeys.rotate': [undefined],
    'apiKeys.revoke': [undefined],
    'apiKeys.delete': [undefined],
    'operators.grant': [undefined],
    'operators.revoke': [undefined],
  };
  const SUCCESS: Record<string, number> = { 'apiKeys.delete': 204, 'operators.revoke': 204 };

  /** An operator (a second one, so none is the last) with a platform key, and a plain user to promote. */
  async function targets(tag: string) {
    const operator = await addTestUser(world, `target-op-${tag}@example.test`, { role: 'administrator', platformOperator: true, passwordHash });
    const key = await createApiKey(world, { capabilities: [...ALL_CAPABILITIES], ownerEmail: operator.email, name: `target ${tag}` });
    const plain = await addTestUser(world, `target-plain-${tag}@example.test`, { role: 'viewer', passwordHash });
    return { operator, key, plain };
  }
  const paramsFor = (operation: Operation, t: Awaited<ReturnType<typeof targets>>): Record<string, string> =>
    operation.id.startsWith('apiKeys.')
      ? { id: t.key.id }
      : operation.id === 'operators.grant'
        ? { userId: t.plain.id }
        : { id: t.operator.id, userId: t.operator.id };

  it("lets no site role act on an operator's account or keys, and changes nothing; an operator may", { timeout: 60_000 }, async () => {
    const accountOps = gated().filter((op) => op.method !== 'GET' && ACCOUNT_PATHS.test(op.path));
    expect(accountOps.map((op) => op.id).sort()).toEqual(Object.keys(BODIES).sort());
    const db = world.services.workspaceDb({ dbName: world.defaultWorkspace.dbName });
    const { users, apiKeys } = accessCollections(db);

    const target = await targets('refused');
    const snapshot = async () => [
      await users.findOne({ _id: target.operator.id }),
      await apiKeys.findOne({ _id: target.key.id }),
      await users.findOne({ _id: target.plain.id }),
    ];
    const before = await snapshot();
    let fresh = 0;
    for (const operation of accountOps) {
      for (const payload of BODIES[operation.id]) {
        const what = (who: string) => `${label(operation, who)} ${JSON.stringify(payload ?? {})}`;
        for (const role of roles.filter((r) => !r.platform)) {
          const response = await call(operation, as(role, operation), { params: paramsFor(operation, target), payload: payload ?? {} });
          // On another site the operator's ids are unknown: refused by the gate or not found.
          if (role.otherSite) expect([403, 404], what(role.name)).toContain(response.statusCode);
          else expectStatus(response, 403, what(role.name));
        }
        const operator = roles.find((r) => r.platform)!;
        const own = await targets(`ok-${(fresh += 1)}`);
        const response = await call(operation, as(operator, operation), { params: paramsFor(operation, own), payload: payload ?? {} });
        expect(response.statusCode, `${what(operator.name)}: ${response.body}`).toBe(SUCCESS[operation.id] ?? 200);
      }
    }
    expect(await snapshot()).toEqual(before);
    // The operator's key still works and the old password still signs in.
    expect((await world.app.inject({ url: '/api/manage/v1/tenants', headers: bearer(target.key.key) })).statusCode).toBe(200);
    await signIn(world, target.operator.email, PASSWORD);
  });
});
