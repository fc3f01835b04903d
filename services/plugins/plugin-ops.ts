import { assertSwitch } from '../tenancy/quota-guard.ts';
import { defineOperation } from '../core/operation.ts';
import { ConflictError } from '../core/errors.ts';
import { listPlugins } from './registry.ts';
import { installPluginHost } from './host.ts';
import { readPluginState, readPluginStates } from './state.ts';
import { isCatalogPlugin } from './catalog/index.ts';
import { PluginIdInput, PluginView, requirePlugin, toPluginView } from './plugin-view.ts';
import { runPluginActivation } from './activation.ts';
import { ListQuery, pageByKey, pageEnvelope } from '../core/paging.ts';

export const listPluginsOp = defineOperation({
  id: 'plugins.list',
  surface: 'manage',
  method: 'GET',
  path: '/plugins',
  summary: 'Installed plugins (the built-ins and the catalog plugins this site installed) and whether each is active on this site',
  requires: 'plugins:read',
  input: ListQuery,
  output: pageEnvelope(PluginView),
  async handler(ctx, input) {
    installPluginHost(ctx.services);
    const states = await readPluginStates(ctx.db, ctx.site._id);
    const installed = listPlugins(ctx.services).filter((p) => !isCatalogPlugin(p.id) || states.has(p.id));
    const page = pageByKey(ctx, 'plugins', installed, (p) => p.id, input);
    return { data: page.items.map((p) => toPluginView(p, states.get(p.id))), page: page.page };
  },
});

export const activatePluginOp = defineOperation({
  id: 'plugins.activate',
  surface: 'manage',
  method: 'POST',
  path: '/plugins/:id/activate',
  summary: 'Activate a plugin on this site',
  description:
    "Runs the plugin's activation routine in a workflow and waits for it. 502 if the routine throws (the plugin stays inactive); 409 while another activation of the same plugin runs, or when a catalog plugin is not installed on this site.",
  requires: 'plugins:activate',
  errors: [409],
  heavy: true,
  input: PluginIdInput,
  output: PluginView,
  events: ['plugin.installed', 'plugin.activated'],
  async handler(ctx, { id }) {
    assertSwitch(ctx, 'plugins');
    const plugin = requirePlugin(ctx, id);
    if (isCatalogPlugin(plugin.id) && !(await readPluginState(ctx.db, ctx.site._id, plugin.id))) {
      throw new ConflictError(`Plugin ${plugin.id} is not installed on this site; install it first (POST /plugins/${plugin.id}/install)`);
    }
    const result = await runPluginActivation(ctx, plugin.id, 'activate');
    if (result.installed) await ctx.emit('plugin.installed', { id: plugin.id, name: plugin.name, version: plugin.version });
    if (result.changed) await ctx.emit('plugin.activated', { id: plugin.id });
    return toPluginView(plugin, await readPluginState(ctx.db, ctx.site._id, plugin.id));
  },
});

export const deactivatePluginOp = defineOperation({
  id: 'plugins.deactivate',
  surface: 'manage',
  method: 'POST',
  path: '/plugins/:id/deactivate',
  summary: 'Deactivate a plugin on this site',
  description: 'Its filters stop applying to this site. A deactivation routine that throws is logged; the plugin is switched off anyway.',
  requires: 'plugins:activate',
  errors: [409],
  heavy: true,
  input: PluginIdInput,
  output: PluginView,
  events: ['plugin.deactivated'],
  async handler(ctx, { id }) {
    const plugin = requirePlugin(ctx, id);
    const result = await runPluginActivation(ctx, plugin.id, 'deactivate');
    if (result.changed) await ctx.emit('plugin.deactivated', { id: plugin.id });
    return toPluginView(plugin, await readPluginState(ctx.db, ctx.site._id, plugin.id));
  },
});

export const pluginOperations = [listPluginsOp, activatePluginOp, deactivatePluginOp];
