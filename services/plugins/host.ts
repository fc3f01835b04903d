import type { Db } from 'mongodb';
import type { Services } from '../core/context.ts';
import { platformCollections } from '../platform/workspaces.ts';
import type { PluginDefinition, PluginHostApi } from './definition.ts';
import type { Action, Filter } from '../core/hooks.ts';
import { pluginRegistry } from './registry.ts';
import { activePluginIds } from './state.ts';
import { installRouteFilters } from './routes.ts';

/**
 * The plugin host of one process. Every registered plugin's `register` runs once, with filters
 * wrapped so they only touch sites where the plugin is active. Which plugins a site has active is
 * read from the workspace database and trusted for `ACTIVE_TTL_MS`: an activation through this
 * process is seen at once (it calls `forgetActivePlugins`), other processes see it within the TTL.
 */
const ACTIVE_TTL_MS = 2000;

interface HostState {
  active: Map<string, { ids: Promise<Set<string>>; expires: number }>;
  /** A site never changes workspace, so its database handle is kept. */
  siteDbs: Map<string, Promise<Db | null>>;
}

const hosts = new WeakMap<Services, HostState>();

/** The site a filter call is about: `siteId` (OpenAPI, webhooks), or the operation context (`mcp.tools`). */
export function siteOfArgs(args: Record<string, unknown>): { siteId: string; db?: Db } | null {
  if (typeof args.siteId === 'string') return { siteId: args.siteId };
  const ctx = args.ctx as { site?: { _id?: unknown }; db?: Db } | undefined;
  if (ctx && typeof ctx.site?._id === 'string') return { siteId: ctx.site._id, db: ctx.db };
  return null;
}

async function lookupSiteDb(services: Services, siteId: string): Promise<Db | null> {
  const { sites, workspaces } = platformCollections(services);
  const site = await sites.findOne({ _id: siteId });
  const workspace = site ? await workspaces.findOne({ _id: site.workspaceId }) : null;
  return workspace ? services.workspaceDb(workspace) : null;
}

function hostState(services: Services): HostState {
  let state = hosts.get(services);
  if (!state) {
    state = { active: new Map(), siteDbs: new Map() };
    hosts.set(services, state);
  }
  return state;
}

/** The ids of the plugins active on a site, from this process's short-lived copy. */
export async function activePluginsOf(services: Services, siteId: string, db?: Db): Promise<Set<string>> {
  const state = hostState(services);
  const hit = state.active.get(siteId);
  if (hit && hit.expires > Date.now()) return hit.ids;
  const ids = (async () => {
    let siteDb = db;
    if (!siteDb) {
      let pending = state.siteDbs.get(siteId);
      if (!pending) {
        pending = lookupSiteDb(services, siteId);
        state.siteDbs.set(siteId, pending);
        // A site that does not exist (yet) is looked up again next time.
        void pending.then((found) => found ?? state.siteDbs.delete(siteId), () => state.siteDbs.delete(siteId));
      }
      siteDb = (await pending) ?? undefined;
    }
    return siteDb ? activePluginIds(siteDb, siteId) : new Set<string>();
  })();
  state.active.set(siteId, { ids, expires: Date.now() + ACTIVE_TTL_MS });
  ids.catch(() => state.active.delete(siteId));
  return ids;
}

/** Drops this process's copy of a site's active plugins (after an activation or deactivation). */
export function forgetActivePlugins(services: Services, siteId?: string): void {
  const { active } = hostState(services);
  if (siteId) active.delete(siteId);
  else active.clear();
}

export function activeCacheSize(services: Services): number {
  return hostState(services).active.size;
}

async function isActiveFor(services: Services, pluginId: string, args: Record<string, unknown>): Promise<boolean> {
  const site = siteOfArgs(args);
  // No site in the call: a site-scoped plugin has nothing to say.
  if (!site) return false;
  return (await activePluginsOf(services, site.siteId, site.db)).has(pluginId);
}

function hostApi(services: Services, plugin: PluginDefinition): PluginHostApi {
  return {
    addFilter<T>(name: string, filter: Filter<T>) {
      services.hooks.addFilter<T>(name, async (value, args) => ((await isActiveFor(services, plugin.id, args)) ? filter(value, args) : value));
    },
    addAction(name: string, action: Action) {
      services.hooks.addAction(name, async (args) => {
        if (await isActiveFor(services, plugin.id, args)) await action(args);
      });
    },
  };
}

const installed = new WeakSet<Services>();

/**
 * Runs every plugin's `register` once for this process. Idempotent; the runtime should call it
 * right after building the services (docs/plugins.md), and the plugin operations and activities
 * call it too so a process that has not done so still gets the filters on first use.
 */
export function installPluginHost(services: Services): void {
  if (installed.has(services)) return;
  installed.add(services);
  const registry = pluginRegistry(services);
  const registerOne = (plugin: PluginDefinition) => {
    try {
      plugin.register?.(hostApi(services, plugin));
    } catch (error) {
      // One broken plugin must not stop the process; it simply adds no filters.
      services.log.error({ plugin: plugin.id, err: error instanceof Error ? error.message : String(error) }, 'plugin register failed');
    }
  };
  for (const plugin of registry.plugins.values()) registerOne(plugin);
  registry.onRegister = registerOne;
  installRouteFilters(services);
}
