import { createHash } from 'node:crypto';
import { topics } from '../../services/core/topics.ts';
import type { World } from './world.ts';
import type { Capability } from '../../services/core/capabilities.ts';
import type { KeyScope } from '../../services/core/principal.ts';
import { createContext } from '../../services/core/context.ts';
import { createSiteResolver } from '../../services/tenancy/site-resolver.ts';
import { loadUserAccess } from '../../services/access/user-access.ts';
import { findUserByEmail } from '../../services/access/users.ts';
import { createKey } from '../../services/access/keys.ts';
import { DEFAULT_KEY_SETTINGS, readSettingsDoc, writeKeySettings, type KeySettings } from '../../services/access/site-settings-store.ts';
import { systemPrincipal, type Principal } from '../../services/core/principal.ts';
import type { WorkspaceCapability } from '../../services/core/capabilities.ts';
import { newId } from '../../services/core/ids.ts';
import { secretDigest } from '../../services/core/text.ts';
import { accessCollections } from '../../services/access/model.ts';
import { createUser } from '../../services/access/users.ts';
import { createSession, SESSION_COOKIE } from '../../services/access/sessions.ts';
import type { Policy } from '../../services/access/roles.ts';
import { createGrantWithCode, exchangeCode } from '../../services/oauth/grants.ts';
import { invokeOperation } from '../../services/core/operation.ts';
import { confirmTotpOp, enrollTotpOp } from '../../services/access/two-factor.ts';
import { totpCode, totpStep } from '../../services/access/totp.ts';

export interface ApiKeyOptions {
  capabilities: Capability[];
  scope?: KeyScope;
  allowedIps?: string[];
  allowedOrigins?: string[];
  expiresAt?: string | Date | null;
  rateLimitPerMin?: number | null;
  name?: string;
  /** Owner (defaults to the world's administrator); must be a user of the site of `host`. */
  ownerEmail?: string;
  /** The site the key belongs to (default: `localhost`, the default site). */
  host?: string;
}

/** A system context on the site `host` resolves to (default: `localhost`, the platform's own site). */
export async function siteContext(world: World, host = 'localhost', principal: Principal = systemPrincipal('test setup')) {
  const scope = await createSiteResolver(world.services).resolve(host);
  if (!scope) throw new Error(`no site for ${host}`);
  return createContext(world.services, scope, principal, { id: 'test', ip: '127.0.0.1' });
}

/** The default site (what `localhost` resolves to) and a system context on it. */
export const defaultSiteContext = (world: World) => siteContext(world);

/**
 * Sets a site's key settings (the Management API switch, the default rate limit); default: the
 * default site. Takes effect on the next request on every gateway.
 */
export async function setKeySettings(world: World, settings: Partial<KeySettings>, host = 'localhost'): Promise<void> {
  const ctx = await siteContext(world, host);
  const doc = await readSettingsDoc(ctx.db, ctx.site._id);
  await writeKeySettings(ctx.db, ctx.site._id, { ...DEFAULT_KEY_SETTINGS, ...doc?.apiKeys, ...settings }, world.services.clock.now());
  // Like the operation: every gateway drops the site's access state before this returns.
  await world.services.changeFeed.publish(topics.siteAccess(ctx.site._id));
}

export const setManagementApi = (world: World, enabled: boolean) => setKeySettings(world, { enabled });

/**
 * Test files send hundreds of requests a minute from 127.0.0.1, which the contract's default of
 * 120 per key and per IP would cut off; the helper lifts the site default to this value the first
 * time it switches the API on (rate-limit tests set their own limits explicitly).
 */
export const TEST_DEFAULT_RATE_LIMIT = 100_000;

/**
 * Creates a key for the world's administrator through the service layer (same ceiling rule as
 * `POST /api/api-keys`) and switches the Management API on.
 */
export async function createApiKey(world: World, options: ApiKeyOptions): Promise<{ key: string; id: string }> {
  const host = options.host ?? 'localhost';
  const ctx = await siteContext(world, host);
  const owner = await findUserByEmail(ctx, options.ownerEmail ?? world.admin.email);
  if (!owner) throw new Error('key owner not found');
  const access = await loadUserAccess(ctx.db, ctx.site._id, owner._id);
  const expiresAt = options.expiresAt instanceof Date ? options.expiresAt.toISOString() : options.expiresAt;
  const { key, record } = await createKey(
    ctx,
    { userId: owner._id, capabilities: access!.capabilities },
    {
      name: options.name ?? 'test key',
      capabilities: options.capabilities,
      scope: options.scope,
      allowedIps: options.allowedIps,
      allowedOrigins: options.allowedOrigins,
      expiresAt: expiresAt ?? null,
      rateLimitPerMin: options.rateLimitPerMin ?? null,
    },
  );
  const current = (await readSettingsDoc(ctx.db, ctx.site._id))?.apiKeys;
  if (!current?.enabled) await setKeySettings(world, { enabled: true, defaultRateLimitPerMin: TEST_DEFAULT_RATE_LIMIT }, host);
  return { key, id: record._id };
}

/**
 * Switches two-factor sign-in on for a user through the enrolment operations themselves (what the
 * account page does), like an authenticator app would: the seed is kept in `world.totpSeeds`.
 * Platform operators need it before their session may do anything (docs/accounts.md).
 */
export async function enrolTwoFactor(world: World, userId: string, host = 'localhost'): Promise<{ secret: string; recoveryCodes: string[] }> {
  const ctx = await siteContext(world, host, { kind: 'user', userId, sessionId: 'test-enrolment', capabilities: new Set(), isPlatformOperator: false });
  const enrolment = await invokeOperation(enrollTotpOp, ctx, {});
  await invokeOperation(confirmTotpOp, ctx, { code: totpCode(enrolment.secret, totpStep(world.services.clock.now())) });
  const user = await accessCollections(ctx.db).users.findOne({ _id: userId });
  world.totpSeeds.set(`${host}:${user!.email}`, enrolment.secret);
  return enrolment;
}

/**
 * The code an authenticator would show now for a user the helpers enrolled. Tests sign in many
 * times a minute, more than one code per step allows (each is accepted once), so the helper first
 * forgets the step last used: a test-only write, no bypass in the service.
 */
export async function currentCode(world: World, email: string, host = 'localhost'): Promise<string | undefined> {
  const secret = world.totpSeeds.get(`${host}:${email.toLowerCase()}`);
  if (!secret) return undefined;
  const ctx = await siteContext(world, host);
  await accessCollections(ctx.db).users.updateOne({ siteId: ctx.site._id, email: email.toLowerCase() }, { $set: { 'totp.lastStep': 0 } });
  return totpCode(secret, totpStep(world.services.clock.now()));
}

/**
 * The code to type in the sign-in form for `email` (a browser test): an operator is enrolled
 * first, as `signIn` does; '' for an account without two-factor sign-in.
 */
export async function signInCode(world: World, email: string = world.admin.email, host = 'localhost'): Promise<string> {
  const ctx = await siteContext(world, host);
  const user = await findUserByEmail(ctx, email);
  if (user) await enrolIfRequired(world, user._id, host);
  return (await currentCode(world, email, host)) ?? '';
}

/** A platform operator without two-factor sign-in gets it first (through `enrolTwoFactor`), as an operator must. */
async function enrolIfRequired(world: World, userId: string, host: string): Promise<void> {
  const ctx = await siteContext(world, host);
  const user = await accessCollections(ctx.db).users.findOne({ _id: userId, siteId: ctx.site._id });
  if (user?.platformOperator && !user.totp?.confirmedAt) await enrolTwoFactor(world, userId, host);
}

/**
 * Signs in through `POST /api/auth/login`; send `cookie` as Cookie and `origin` as Origin. A
 * platform operator is enrolled in two-factor sign-in first, and the helper sends the current code
 * for any account it enrolled.
 */
export async function signIn(
  world: World,
  email: string = world.admin.email,
  password: string = world.admin.password,
): Promise<{ cookie: string; origin: string }> {
  const origin = 'http://localhost';
  const ctx = await siteContext(world);
  const user = await findUserByEmail(ctx, email);
  if (user) await enrolIfRequired(world, user._id, 'localhost');
  const code = await currentCode(world, email);
  const response = await world.app.inject({
    method: 'POST',
    url: '/api/auth/login',
    headers: { origin },
    payload: { email, password, ...(code ? { code } : {}) },
  });
  if (response.statusCode !== 200) throw new Error(`sign-in failed: ${response.statusCode} ${response.body}`);
  const setCookie = response.headers['set-cookie'];
  const line = Array.isArray(setCookie) ? setCookie[0] : setCookie;
  if (!line) throw new Error('sign-in set no cookie');
  return { cookie: line.split(';')[0], origin };
}

export interface TestUserOptions {
  /** A built-in role; without it the user gets a custom role made for it holding exactly `capabilities`. */
  role?: string;
  capabilities?: WorkspaceCapability[];
  policy?: Policy;
  platformOperator?: boolean;
  /** A stored scrypt hash (`hashPassword`), so many users cost one hash; default: `password`. */
  passwordHash?: string;
  password?: string;
  host?: string;
}

/**
 * A user of the site of `host` created through the service layer (as the system, so no grant
 * ceiling applies): a built-in `role`, or a custom role holding exactly `capabilities`.
 */
export async function addTestUser(world: World, email: string, options: TestUserOptions = {}): Promise<{ id: string; email: string }> {
  const ctx = await siteContext(world, options.host);
  let role = options.role ?? 'viewer';
  if (!options.role) {
    const now = world.services.clock.now();
    role = newId();
    await accessCollections(ctx.db).roles.insertOne({
      _id: role,
      siteId: ctx.site._id,
      name: `only ${role}`,
      description: '',
      capabilities: options.capabilities ?? [],
      createdAt: now,
      updatedAt: now,
    });
  }
  const secret = options.passwordHash ? { passwordHash: options.passwordHash } : { password: options.password ?? `pw-${email}-long-enough` };
  const user = await createUser(ctx, { email, role, policy: options.policy ?? {}, platformOperator: options.platformOperator ?? false, ...secret });
  if (user.platformOperator) await enrolTwoFactor(world, user._id, options.host);
  return { id: user._id, email };
}

/**
 * A session of a user, opened without its password (the row sign-in writes), for tests that need
 * many signed-in principals without paying a password hash each. Send `cookie` and `origin`.
 */
export async function openSession(world: World, userId: string, host = 'localhost'): Promise<{ cookie: string; origin: string; sessionId: string }> {
  await enrolIfRequired(world, userId, host);
  const ctx = await siteContext(world, host);
  const { token } = await createSession(ctx.db, ctx.site._id, userId, world.services.clock.now());
  return { cookie: `${SESSION_COOKIE}=${token}`, origin: `http://${host}`, sessionId: secretDigest(token) };
}

/**
 * An OAuth grant of a user to a made-up client, bound to the Management API of `host` (send
 * `host` as the Host header), and its first token pair; the consent screen is skipped (its own
 * tests are in test/mcp/oauth.test.ts).
 */
export async function oauthTokensFor(world: World, userId: string, scope: Capability[], host = 'localhost') {
  const ctx = await siteContext(world, host);
  const verifier = 'v'.repeat(43);
  const input = { clientId: 'test-client', userId, scope, resource: `http://${host}/api/manage/v1`, redirectUri: 'http://127.0.0.1/cb' };
  const code = await createGrantWithCode(
    ctx.db,
    ctx.site._id,
    { ...input, codeChallenge: createHash('sha256').update(verifier).digest('base64url') },
    world.services.clock.now(),
  );
  const tokens = await exchangeCode(
    ctx.db,
    ctx.site._id,
    { code, clientId: input.clientId, redirectUri: input.redirectUri, codeVerifier: verifier },
    world.services.clock.now(),
  );
  return { ...tokens, clientId: input.clientId };
}
