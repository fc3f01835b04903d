import type { LightMyRequestResponse } from 'fastify';
import type { World } from '../support/world.ts';
import { createApiKey, TEST_DEFAULT_RATE_LIMIT } from '../support/access.ts';
import type { Capability } from '../../services/core/capabilities.ts';
import { CAPABILITIES } from '../../services/core/capabilities.ts';
import { createContext } from '../../services/core/context.ts';
import { systemPrincipal } from '../../services/core/principal.ts';
import type { Workspace } from '../../services/core/tenants.ts';
import { createSiteResolver } from '../../services/tenancy/site-resolver.ts';
import { platformCollections } from '../../services/tenancy/platform-db.ts';
import { findUserByEmail } from '../../services/access/users.ts';
import { loadUserAccess } from '../../services/access/user-access.ts';
import { createKey } from '../../services/access/keys.ts';
import { DEFAULT_KEY_SETTINGS, writeKeySettings } from '../../services/access/site-settings-store.ts';
import { eventually } from '../support/polling.ts';

export const PLATFORM_KEY_CAPABILITIES: Capability[] = ['platform:read', 'platform:manage', ...CAPABILITIES];
export const tenantAdmin = { email: 'owner@tenant.example.test', password: 'correct horse battery staple' };
export const newAdmin = { email: 'owner@lifecycle.example.test', password: 'correct horse battery staple' };

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

/** A Management API caller with a platform operator's key (the bootstrap administrator's, with platform rights). */
export async function operatorCaller(world: World) {
  const key = await operatorKey(world);
  return (method: string, url: string, payload?: unknown) =>
    world.app.inject({ method: method as never, url: `/api/manage/v1${url}`, headers: { authorization: `Bearer ${key}` }, payload: payload as never });
}

export const workspaceRow = (world: World, id: string) => platformCollections(world.services).workspaces.findOne({ _id: id });

/** The workspace row once `done` holds (the worker finishing a step), or fails after `ms`. */
export function waitForWorkspace(world: World, id: string, done: (w: Workspace) => boolean, ms = 60_000): Promise<Workspace> {
  return eventually(
    async () => {
      const row = await workspaceRow(world, id);
      return row && done(row) ? row : null;
    },
    `workspace ${id} to reach its state`,
    ms,
    100,
  );
}

export async function databaseNames(world: World): Promise<string[]> {
  return (await world.services.mongo.db('admin').admin().listDatabases({ nameOnly: true })).databases.map((d) => d.name);
}

/** A key of the site `host` resolves to, owned by `email` there (service layer, same ceiling as the API). */
export async function keyOnHost(world: World, host: string, capabilities: Capability[], email = tenantAdmin.email): Promise<string> {
  const scope = await createSiteResolver(world.services).resolve(host);
  if (!scope) throw new Error(`no site for ${host}`);
  const ctx = createContext(world.services, scope, systemPrincipal('test setup'), { id: 'test', ip: '127.0.0.1' });
  const owner = await findUserByEmail(ctx, email);
  if (!owner) throw new Error('owner not found');
  const access = await loadUserAccess(ctx.db, ctx.site._id, owner._id);
  const { key } = await createKey(ctx, { userId: owner._id, capabilities: access!.capabilities }, { name: 'tenant key', capabilities });
  await writeKeySettings(
    ctx.db,
    ctx.site._id,
    { ...DEFAULT_KEY_SETTINGS, enabled: true, defaultRateLimitPerMin: TEST_DEFAULT_RATE_LIMIT },
    world.services.clock.now(),
  );
  return key;
}

/**
 * Creates a workspace through the API (202: the workspace actor provisions it) and waits until it
 * is active, polling GET /tenants/{id}; needs a world with a worker. Returns its ids.
 */
export async function createTenant(call: Call, name: string, domain: string) {
  const created = await call('POST', '/tenants', { name, domains: [domain], admin: tenantAdmin });
  if (created.statusCode !== 202) throw new Error(`tenant creation failed: ${created.statusCode} ${created.body}`);
  const { tenant, site } = created.json();
  if (tenant.status !== 'active') {
    await eventually(async () => (await call('GET', `/tenants/${tenant.id}`)).json().tenant.status === 'active', `tenant ${tenant.id} active`, 60_000, 100);
  }
  return { tenantId: tenant.id as string, siteId: site.id as string, host: domain };
}
