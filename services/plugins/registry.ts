import type { Services } from '../core/context.ts';
import type { PluginDefinition } from './definition.ts';
import { builtinPlugins } from './builtin/index.ts';

/**
 * The installed plugin definitions of one process. Keyed by the services object so a test world
 * can install a test-only plugin (`broken`) without it leaking into other worlds.
 */
interface Registry {
  plugins: Map<string, PluginDefinition>;
  /** Set by the host once it is installed: new plugins register their filters at once. */
  onRegister?: (plugin: PluginDefinition) => void;
}

const registries = new WeakMap<Services, Registry>();

export function pluginRegistry(services: Services): Registry {
  let registry = registries.get(services);
  if (!registry) {
    registry = { plugins: new Map(builtinPlugins.map((p) => [p.id, p])) };
    registries.set(services, registry);
  }
  return registry;
}

export function registerPlugin(services: Services, plugin: PluginDefinition): void {
  const registry = pluginRegistry(services);
  if (registry.plugins.has(plugin.id)) throw new Error(`plugin ${plugin.id} is already registered`);
  registry.plugins.set(plugin.id, plugin);
  registry.onRegister?.(plugin);
}

export function findPlugin(services: Services, id: string): PluginDefinition | undefined {
  return pluginRegistry(services).plugins.get(id);
}

/** Sorted by id: the list pages by id. */
export function listPlugins(services: Services): PluginDefinition[] {
  return [...pluginRegistry(services).plugins.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
