import type { Services } from '../core/context.ts';
import { openApiPath, type Operation } from '../core/operation.ts';
import { NotFoundError } from '../core/errors.ts';
import type { PluginDefinition } from './definition.ts';
import { siteOfArgs } from './active-sites.ts';

/** A plugin's operations, each answering 404 on sites where the plugin is not active. */
export function gatedPluginOperations(plugins: readonly PluginDefinition[]): Operation[] {
  return plugins.flatMap((plugin) =>
    (plugin.operations ?? []).map((operation) => {
      const gated: Operation = {
        ...operation,
        plugin: plugin.id,
        async handler(ctx, input) {
          if (!(await ctx.services.activePlugins.of(ctx.site._id, ctx.db)).has(plugin.id)) throw new NotFoundError();
          return operation.handler(ctx, input);
        },
      };
      return gated;
    }),
  );
}

interface OpenApiLike {
  paths?: Record<string, Record<string, unknown>>;
}

/**
 * The generated documents and tool lists hold every mounted operation; these filters take out the
 * ones of plugins that are not active on the caller's site (contract 9.2: the live document
 * includes the operations of active plugins).
 */
export function installRouteFilters(services: Services): void {
  const inactiveOwners = async (args: Record<string, unknown>) => {
    const site = siteOfArgs(args);
    const active = site ? await services.activePlugins.of(site.siteId, site.db) : new Set<string>();
    return (operation: Operation | undefined) => {
      const owner = operation?.plugin;
      return owner !== undefined && !active.has(owner);
    };
  };
  services.hooks.addFilter<OpenApiLike>('openapi.document', async (doc, args) => {
    const hidden = await inactiveOwners(args);
    for (const operation of services.features.flatMap((feature) => feature.operations)) {
      if (operation.surface !== args.surface || !hidden(operation)) continue;
      const path = openApiPath(operation.path);
      const item = doc.paths?.[path];
      if (!item) continue;
      delete item[operation.method.toLowerCase()];
      if (Object.keys(item).length === 0) delete doc.paths![path];
    }
    return doc;
  });
  services.hooks.addFilter<Array<{ operation?: Operation }>>('mcp.tools', async (tools, args) => {
    const hidden = await inactiveOwners(args);
    return tools.filter((tool) => !hidden(tool.operation));
  });
}
