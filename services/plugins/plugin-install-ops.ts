import { assertSwitch } from '../tenancy/quota-guard.ts';
import type { OperationContext } from '../core/context.ts';
import { defineOperation } from '../core/operation.ts';
import { ConflictError } from '../core/errors.ts';
import { ListQuery, pageByKey, pageEnvelope } from '../core/paging.ts';
import type { PluginDefinition } from './definition.ts';
import { catalogPlugins, isCatalogPlugin } from './catalog/index.ts';
import { markInstalled, markUninstalled, readPluginState, readPluginStates } from './state.ts';
import { runPluginActivation } from './activation.ts';
import { PluginIdInput, PluginView, requirePlugin, toPluginView } from './plugin-view.ts';

/**
 * Only catalog plugins are installed and uninstalled per site; a built-in is installed everywhere
 * (installing it changes nothing, uninstalling it is a 409). An id in neither list is a 404.
 */
function requireInstallable(ctx: OperationContext, id: string): { plugin: PluginDefinition; builtin: boolean } {
  const plugin = requirePlugin(ctx, id);
  return { plugin, builtin: !isCatalogPlugin(plugin.id) };
}

export const listPluginCatalogOp = defineOperation({
  id: 'plugins.catalog',
  surface: 'manage',
  method: 'GET',
  path: '/plugins/catalog',
  summary: 'The plugins this service offers for installation, and whether this site installed each',
  requires: 'plugins:read',
  input: ListQuery,
  output: pageEnvelope(PluginView),
  async handler(ctx, input) {
    const states = await readPluginStates(ctx.db, ctx.site._id);
    const sorted = [...catalogPlugins].sort((a, b) => (a.id < b.id ? -1 : 1));
    const page = pageByKey(ctx, 'plugin-catalog', sorted, (p) => p.id, input);
    return { data: page.items.map((p) => toPluginView(p, states.get(p.id))), page: page.page };
  },
});

export const installPluginOp = defineOperation({
  id: 'plugins.install',
  surface: 'manage',
  method: 'POST',
  path: '/plugins/:id/install',
  summary: 'Install a catalog plugin on this site (inactive until activated)',
  description:
    "Only plugins of the service's catalog (`GET /plugins/catalog`) can be installed: any other id is a 404. Installing an installed plugin, or a built-in, changes nothing and emits no event.",
  requires: 'plugins:activate',
  heavy: true,
  input: PluginIdInput,
  output: PluginView,
  events: ['plugin.installed'],
  async handler(ctx, { id }) {
    assertSwitch(ctx, 'plugins');
    const { plugin, builtin } = requireInstallable(ctx, id);
    if (!builtin && (await markInstalled(ctx.db, ctx.site._id, plugin.id, plugin.version, ctx.services.clock.now()))) {
      await ctx.emit('plugin.installed', { id: plugin.id, name: plugin.name, version: plugin.version });
    }
    return toPluginView(plugin, await readPluginState(ctx.db, ctx.site._id, plugin.id));
  },
});

export const uninstallPluginOp = defineOperation({
  id: 'plugins.uninstall',
  surface: 'manage',
  method: 'POST',
  path: '/plugins/:id/uninstall',
  summary: 'Uninstall a catalog plugin from this site; an active one is deactivated first',
  description:
    'An active plugin goes through the deactivation workflow first (its `deactivate` routine runs, `plugin.deactivated` is emitted), then its row is removed (`plugin.uninstalled`). Built-ins cannot be uninstalled (409). Uninstalling a plugin the site does not have changes nothing.',
  requires: 'plugins:activate',
  errors: [409],
  heavy: true,
  input: PluginIdInput,
  output: PluginView,
  events: ['plugin.deactivated', 'plugin.uninstalled'],
  async handler(ctx, { id }) {
    const { plugin, builtin } = requireInstallable(ctx, id);
    if (builtin) throw new ConflictError(`Plugin ${plugin.id} is built in and cannot be uninstalled; deactivate it instead`);
    const state = await readPluginState(ctx.db, ctx.site._id, plugin.id);
    if (!state) return toPluginView(plugin, null);
    if (state.active) {
      // The one deactivation path (workflow, routine, 409 while another run holds the id).
      const result = await runPluginActivation(ctx, plugin.id, 'deactivate');
      if (result.changed) await ctx.emit('plugin.deactivated', { id: plugin.id });
    }
    if (!(await markUninstalled(ctx.db, ctx.site._id, plugin.id))) {
      // Activated again between the two steps (or already gone): say so rather than guess.
      const now = await readPluginState(ctx.db, ctx.site._id, plugin.id);
      if (now) throw new ConflictError(`Plugin ${plugin.id} was activated again while being uninstalled`);
      return toPluginView(plugin, null);
    }
    ctx.services.activePlugins.forget(ctx.site._id);
    await ctx.emit('plugin.uninstalled', { id: plugin.id });
    return toPluginView(plugin, null);
  },
});

export const pluginInstallOperations = [listPluginCatalogOp, installPluginOp, uninstallPluginOp];
