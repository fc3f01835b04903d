import { ApplicationFailure } from '@temporalio/activity';
import type { Services } from '../services/core/context.ts';
import { findSiteScope } from '../services/tenancy/platform-db.ts';
import { findPlugin } from '../services/plugins/registry.ts';
import { installPluginHost } from '../services/plugins/host.ts';
import { markActive, markInactive, readPluginState } from '../services/plugins/state.ts';
import { isCatalogPlugin } from '../services/plugins/catalog/index.ts';
import type { PluginSiteApi } from '../services/plugins/definition.ts';
import { PLUGIN_ROUTINE_FAILED, type PluginRoutineInput, type PluginRoutineResult } from '../workflows/contracts/plugin-activation.ts';

export type { PluginRoutineInput, PluginRoutineResult };

export function createPluginActivities(services: Services) {
  installPluginHost(services);
  return {
    /**
     * Runs the plugin's activate/deactivate routine for one site and records the result. Safe to
     * run twice: an already active plugin is not activated again. A throwing activate routine is
     * reported (non-retryable) and nothing is recorded; a throwing deactivate routine is logged and
     * the plugin is still switched off, so a broken plugin can always be turned off.
     */
    async runPluginRoutine(input: PluginRoutineInput): Promise<PluginRoutineResult> {
      const plugin = findPlugin(services, input.pluginId);
      if (!plugin) throw ApplicationFailure.nonRetryable(`Plugin ${input.pluginId} is not installed on the worker`, PLUGIN_ROUTINE_FAILED);
      const scope = await findSiteScope(services, input.siteId, input.workspaceId);
      if (!scope) throw ApplicationFailure.nonRetryable('Site not found', PLUGIN_ROUTINE_FAILED);
      const { workspace, site } = scope;
      const db = services.workspaceDb(workspace);
      const api: PluginSiteApi = {
        pluginId: plugin.id,
        workspaceId: workspace._id,
        siteId: site._id,
        db,
        log: services.log.child({ plugin: plugin.id, siteId: site._id }),
        now: () => services.clock.now(),
      };
      const current = await readPluginState(db, site._id, plugin.id);

      if (input.action === 'activate') {
        if (current?.active) return { changed: false, installed: false };
        // A catalog plugin uninstalled since the operation checked: nothing to activate.
        if (!current && isCatalogPlugin(plugin.id)) return { changed: false, installed: false };
        try {
          await plugin.activate?.(api);
        } catch (error) {
          throw ApplicationFailure.nonRetryable(error instanceof Error ? error.message : String(error), PLUGIN_ROUTINE_FAILED);
        }
        const result = await markActive(db, site._id, plugin.id, plugin.version, services.clock.now());
        services.activePlugins.forget(site._id);
        return result;
      }

      if (!current?.active) return { changed: false, installed: false };
      try {
        await plugin.deactivate?.(api);
      } catch (error) {
        api.log.warn({ err: error instanceof Error ? error.message : String(error) }, 'plugin deactivate routine failed; switched off anyway');
      }
      const { changed } = await markInactive(db, site._id, plugin.id, services.clock.now());
      services.activePlugins.forget(site._id);
      return { changed, installed: false };
    },
  };
}

export type PluginActivities = ReturnType<typeof createPluginActivities>;
