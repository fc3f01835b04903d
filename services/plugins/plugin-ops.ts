import { z } from 'zod';
import { assertSwitch } from '../tenancy/quota-guard.ts';
import type { OperationContext } from '../core/context.ts';
import { defineOperation } from '../core/operation.ts';
import { NotFoundError } from '../core/errors.ts';
import type { PluginDefinition } from './definition.ts';
import { findPlugin, listPlugins } from './registry.ts';
import { installPluginHost } from './host.ts';
import { readPluginState, readPluginStates, type PluginStateDoc } from './state.ts';
import { runPluginActivation } from './activation.ts';
import { ListQuery, pageByKey, pageEnvelope } from '../core/paging.ts';

const PluginView = z.object({
  id: z.string(),
  name: z.string(),
  version: z.string(),
  description: z.string(),
  active: z.boolean(),
  installedAt: z.string().nullable(),
  activatedAt: z.string().nullable(),
  deactivatedAt: z.string().nullable(),
});

const iso = (date: Date | null | undefined) => (date ? date.toISOString() : null);

function toView(plugin: PluginDefinition, state: PluginStateDoc | null | undefined): z.infer<typeof PluginView> {
  return {
    id: plugin.id,
    name: plugin.name,
    version: plugin.version,
    description: plugin.description,
    active: state?.active ?? false,
    installedAt: iso(state?.installedAt),
    activatedAt: iso(state?.activatedAt),
    deactivatedAt: iso(state?.deactivatedAt),
  };
}

function requirePlugin(ctx: OperationContext, id: string): PluginDefinition {
  installPluginHost(ctx.services);
  const plugin = findPlugin(ctx.services, id);
  if (!plugin) throw new NotFoundError('Plugin not found');
  return plugin;
}

export const listPluginsOp = defineOperation({
  id: 'plugins.list',
  surface: 'manage',
  method: 'GET',
  path: '/plugins',
  summary: 'Installed plugins and whether each is active on this site',
  requires: 'plugins:read',
  input: ListQuery,
  output: pageEnvelope(PluginView),
  async handler(ctx, input) {
    installPluginHost(ctx.services);
    const states = await readPluginStates(ctx.db, ctx.site._id);
    const page = pageByKey(ctx, 'plugins', listPlugins(ctx.services), (p) => p.id, input);
    return { data: page.items.map((p) => toView(p, states.get(p.id))), page: page.page };
  },
});

const PluginIdInput = z.object({ id: z.string().min(1).max(100) });

export const activatePluginOp = defineOperation({
  id: 'plugins.activate',
  surface: 'manage',
  method: 'POST',
  path: '/plugins/:id/activate',
  summary: 'Activate a plugin on this site',
  description: 'Runs the plugin\'s activation routine in a workflow and waits for it. 502 if the routine throws (the plugin stays inactive); 409 while another activation of the same plugin runs.',
  requires: 'plugins:activate',
  errors: [409],
  heavy: true,
  input: PluginIdInput,
  output: PluginView,
  events: ['plugin.installed', 'plugin.activated'],
  async handler(ctx, { id }) {
    assertSwitch(ctx, 'plugins');
    const plugin = requirePlugin(ctx, id);
    const result = await runPluginActivation(ctx, plugin.id, 'activate');
    if (result.installed) await ctx.emit('plugin.installed', { id: plugin.id, name: plugin.name, version: plugin.version });
    if (result.changed) await ctx.emit('plugin.activated', { id: plugin.id });
    return toView(plugin, await readPluginState(ctx.db, ctx.site._id, plugin.id));
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
    return toView(plugin, await readPluginState(ctx.db, ctx.site._id, plugin.id));
  },
});

export const pluginOperations = [listPluginsOp, activatePluginOp, deactivatePluginOp];
