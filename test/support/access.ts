import { topics } from '../../services/core/topics.ts';
import type { World } from './world.ts';
import type { Capability } from '../../services/core/capabilities.ts';
import type { KeyScope } from '../../services/core/principal.ts';
import { createContext } from '../../services/core/context.ts';
import { createSiteResolver } from '../../services/platform/tenancy.ts';
import { loadUserAccess } from '../../services/access/user-access.ts';
import { findUserByEmail } from '../../services/access/users.ts';
import { createKey } from '../../services/access/keys.ts';
import { DEFAULT_KEY_SETTINGS, readSettingsDoc, writeKeySettings, type KeySettings } from '../../services/access/site-settings-store.ts';
import { systemPrincipal } from '../../services/core/principal.ts';

export interface ApiKeyOptions {
  capabilities: Capability[];
  scope?: KeyScope;
  allowedIps?: string[];
  allowedOrigins?: string[];
  expiresAt?: string | Date | null;
  rateLimitPerMin?: number | null;
  name?: string;
  /** Owner (defaults to the world's administrator); must be a user of the default site. */
  ownerEmail?: string;
}

/** The default site (what `localhost` resolves to) and a system context on it. */
export async function defaultSiteContext(world: World) {
  const scope = await createSiteResolver(world.services).resolve('localhost');
  if (!scope) throw new Error('default site missing');
  return createContext(world.services, scope, systemPrincipal('test setup'), { id: 'test', ip: '127.0.0.1' });
}

/**
 * Sets the default site's key settings (the Management API switch, the default rate limit).
 * Takes effect on the next request on every gateway.
 */
export async function setKeySettings(world: World, settings: Partial<KeySettings>): Promise<void> {
  const ctx = await defaultSiteContext(world);
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
  const ctx = await defaultSiteContext(world);
  const owner = await findUserByEmail(ctx, options.ownerEmail ?? world.admin.email);
  if (!owner) throw new Error('key owner not found');
  const access = await loadUserAccess(ctx.db, ctx.site._id, owner._id);
  const expiresAt = options.expiresAt instanceof Date ? options.expiresAt.toISOString() : options.expiresAt;
  const { key, record } = await createKey(ctx, { userId: owner._id, capabilities: access!.capabilities }, {
    name: options.name ?? 'test key',
    capabilities: options.capabilities,
    scope: options.scope,
    allowedIps: options.allowedIps,
    allowedOrigins: options.allowedOrigins,
    expiresAt: expiresAt ?? null,
    rateLimitPerMin: options.rateLimitPerMin ?? null,
  });
  const current = (await readSettingsDoc(ctx.db, ctx.site._id))?.apiKeys;
  await setKeySettings(world, {
    enabled: true,
    ...(current?.enabled ? {} : { defaultRateLimitPerMin: TEST_DEFAULT_RATE_LIMIT }),
  });
  return { key, id: record._id };
}

/** Signs in through `POST /api/auth/login`; send `cookie` as Cookie and `origin` as Origin. */
export async function signIn(
  world: World,
  email: string = world.admin.email,
  password: string = world.admin.password,
): Promise<{ cookie: string; origin: string }> {
  const origin = 'http://localhost';
  const response = await world.app.inject({ method: 'POST', url: '/api/auth/login', headers: { origin }, payload: { email, password } });
  if (response.statusCode !== 200) throw new Error(`sign-in failed: ${response.statusCode} ${response.body}`);
  const setCookie = response.headers['set-cookie'];
  const line = Array.isArray(setCookie) ? setCookie[0] : setCookie;
  if (!line) throw new Error('sign-in set no cookie');
  return { cookie: line.split(';')[0], origin };
}
