import type { Services } from '../core/context.ts';
import type { PluginDefinition, PluginHostApi } from './definition.ts';
import type { Action, Filter } from '../core/hooks.ts';
import { siteOfArgs } from './active-sites.ts';
import { installRouteFilters } from './routes.ts';

/**
 * The plugin host of one process. Every registered plugin's `register` runs once, with filters
 * wrapped so they only touch sites where the plugin is active (`services.activePlugins`).
 */

async function isActiveFor(services: Services, pluginId: string, args: Record<string, unknown>): Promise<boolean> {
  const site = siteOfArgs(args);
  // No site in the call: a site-scoped plugin has nothing to say.
  if (!site) return false;
  return (await services.activePlugins.of(site.siteId, site.db)).has(pluginId);
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

/**
 * Runs every plugin's `register` once for this process. Idempotent; the runtime should call it
 * right after building the services (docs/plugins.md), and the plugin operations and activities
 * call it too so a process that has not done so still gets the filters on first use.
 */
export function installPluginHost(services: Services): void {
  const registry = services.plugins;
  if (registry.hostInstalled) return;
  registry.hostInstalled = true;
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
