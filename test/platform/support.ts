import type { LightMyRequestResponse } from 'fastify';
import type { World } from '../support/world.ts';
import { createApiKey, TEST_DEFAULT_RATE_LIMIT } from '../support/access.ts';
import type { Capability } from '../../services/core/capabilities.ts';
import { CAPABILITIES } from '../../services/core/capabilities.ts';
import { createContext } from '../../services/core/context.ts';
import { systemPrincipal } from '../../services/core/principal.ts';
import { createSiteResolver } from '../../services/platform/tenancy.ts';
import { findUserByEmail } from '../../services/access/users.ts';
import { loadUserAccess } from '../../services/access/user-access.ts';
import { createKey } from '../../services/access/keys.ts';
import { DEFAULT_KEY_SETTINGS, writeKeySettings } from '../../services/site/settings-store.ts';

export const PLATFORM_KEY_CAPABILITIES: Capability[] = ['platform:read', 'platform:manage', ...CAPABILITIES];
export const tenantAdmin = { email: 'owner@tenant.example.test', password: 'correct horse battery staple' };

export type Call = (method: string, url: string, payload?: unknown, key?: string, host?: string) => Promise<LightMyRequestResponse>;

/** A Management API caller; `host` picks the site (default: localhost, the platform's own). */
export function caller(world: World, defaultKey: () => string): Call {
  return (method, url, payload, key = defaultKey(), host = 'localhost') =>
    world.app.inject({
      method: method as never,
      url: `/api/manage/v1${url}`,
      headers: { authorization: `Bearer ${key}`, host },
      payload: payload as never,
    });
}

export const operatorKey = async (world: World) => (await createApiKey(world, { capabilities: PLATFORM_KEY_CAPABILITIES })).key;

/** A key of the site `host` resolves to, owned by `email` there (service layer, same ceiling as the API). */
export async function keyOnHost(world: World, host: string, capabilities: Capability[], email = tenantAdmin.email): Promise<string> {
  const scope = await createSiteResolver(world.services).resolve(host);
  if (!scope) throw new Error(`no site for ${host}`);
  const ctx = createContext(world.services, scope, systemPrincipal('test setup'), { id: 'test', ip: '127.0.0.1' });
  const owner = await findUserByEmail(ctx, email);
  if (!owner) throw new Error('owner not found');
  const access = await loadUserAccess(ctx.db, ctx.site._id, owner._id);
  const { key } = await createKey(ctx, { userId: owner._id, capabilities: access!.capabilities }, { name: 'tenant key', capabilities });
  await writeKeySettings(ctx.db, ctx.site._id, { ...DEFAULT_KEY_SETTINGS, enabled: true, defaultRateLimitPerMin: TEST_DEFAULT_RATE_LIMIT }, world.services.clock.now());
  return key;
}

/** Creates a workspace through the API; returns its ids. */
export async function createTenant(call: Call, name: string, domain: string) {
  const created = await call('POST', '/tenants', { name, domains: [domain], admin: tenantAdmin });
  if (created.statusCode !== 201) throw new Error(`tenant creation failed: ${created.statusCode} ${created.body}`);
  const { tenant, site } = created.json();
  return { tenantId: tenant.id as string, siteId: site.id as string, host: domain };
}
