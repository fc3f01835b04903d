import type { Services } from '../core/context.ts';
import type { PluginDefinition } from './definition.ts';
import { builtinPlugins } from './builtin/index.ts';
import { catalogPlugins } from './catalog/index.ts';

/**
 * The plugin definitions one process carries (built-ins and the catalog's) (`services.plugins`, built in runtime.ts), so a
 * test world can install a test-only plugin (`broken`) without it leaking into other worlds.
 */
export interface PluginRegistry {
  plugins: Map<string, PluginDefinition>;
  /** Set by the host once it is installed: new plugins register their filters at once. */
  onRegister?: (plugin: PluginDefinition) => void;
  /** The host ran every `register` in this process (installPluginHost is idempotent). */
  hostInstalled: boolean;
}

export function createPluginRegistry(): PluginRegistry {
  return { plugins: new Map([...builtinPlugins, ...catalogPlugins].map((p) => [p.id, p])), hostInstalled: false };
}

export function registerPlugin(services: Services, plugin: PluginDefinition): void {
  const registry = services.plugins;
  if (registry.plugins.has(plugin.id)) throw new Error(`plugin ${plugin.id} is already registered`);
  registry.plugins.set(plugin.id, plugin);
  registry.onRegister?.(plugin);
}

export function findPlugin(services: Services, id: string): PluginDefinition | undefined {
  return services.plugins.plugins.get(id);
}

/** Sorted by id: the list pages by id. */
export function listPlugins(services: Services): PluginDefinition[] {
  return [...services.plugins.plugins.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
