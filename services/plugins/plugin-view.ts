import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { NotFoundError } from '../core/errors.ts';
import type { PluginDefinition } from './definition.ts';
import { findPlugin } from './registry.ts';
import { installPluginHost } from './host.ts';
import type { PluginStateDoc } from './state.ts';
import { isCatalogPlugin } from './catalog/index.ts';

export const PluginView = z.object({
  id: z.string(),
  name: z.string(),
  version: z.string(),
  description: z.string(),
  /** Built-ins are installed on every site and cannot be uninstalled; catalog plugins (and themes) are installed per site. */
  builtin: z.boolean(),
  installed: z.boolean(),
  active: z.boolean(),
  installedAt: z.string().nullable(),
  activatedAt: z.string().nullable(),
  deactivatedAt: z.string().nullable(),
});

const iso = (date: Date | null | undefined) => (date ? date.toISOString() : null);

export function toPluginView(plugin: PluginDefinition, state: PluginStateDoc | null | undefined): z.infer<typeof PluginView> {
  const builtin = !isCatalogPlugin(plugin.id);
  return {
    id: plugin.id,
    name: plugin.name,
    version: plugin.version,
    description: plugin.description,
    builtin,
    installed: builtin || !!state,
    active: state?.active ?? false,
    installedAt: iso(state?.installedAt),
    activatedAt: iso(state?.activatedAt),
    deactivatedAt: iso(state?.deactivatedAt),
  };
}

export function requirePlugin(ctx: OperationContext, id: string): PluginDefinition {
  installPluginHost(ctx.services);
  const plugin = findPlugin(ctx.services, id);
  if (!plugin) throw new NotFoundError('Plugin not found');
  return plugin;
}

export const PluginIdInput = z.object({ id: z.string().min(1).max(100) });
