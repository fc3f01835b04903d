import type { Feature } from '../core/feature.ts';
import { pluginOperations } from './plugin-ops.ts';
import { pluginInstallOperations } from './plugin-install-ops.ts';
import { themeOperations } from './theme-ops.ts';
import { gatedPluginOperations } from './routes.ts';
import { builtinPlugins } from './builtin/index.ts';
import { catalogPlugins } from './catalog/index.ts';

/** Plugin host (per-site activation through Temporal) and themes (docs/plugins.md). */
export const pluginsFeature: Feature = {
  name: 'plugins',
  operations: [...pluginOperations, ...pluginInstallOperations, ...themeOperations, ...gatedPluginOperations([...builtinPlugins, ...catalogPlugins])],
  // No index of its own: one row per plugin a site installed (the catalog bounds them), read whole
  // per site and held by each process (host.ts).
};
