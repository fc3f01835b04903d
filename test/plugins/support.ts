import { topics } from '../../services/core/topics.ts';
import type { LightMyRequestResponse } from 'fastify';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { createWorkspace, startWorld, type World, type WorldOptions } from '../support/world.ts';
import { createApiKey, defaultSiteContext } from '../support/access.ts';
import type { Capability } from '../../services/core/capabilities.ts';
import { installPluginHost } from '../../services/plugins/host.ts';
import { PLATFORM_COLLECTIONS } from '../../services/core/tenants.ts';
import { DEFAULT_SITE_META_ID } from '../../services/tenancy/site-resolver.ts';

export interface PluginWorld {
  world: World;
  /** Every event the operations emitted, in order. */
  events: Array<{ event: string; data: Record<string, unknown> }>;
  manage(method: string, url: string, key: string, body?: unknown): Promise<LightMyRequestResponse>;
  keyWith(capabilities: Capability[]): Promise<string>;
  site(): ReturnType<typeof defaultSiteContext>;
  close(): Promise<void>;
}

/** A world with the plugin host installed (as the runtime should do) and a record of emitted events. */
export async function startPluginWorld(options: WorldOptions = {}): Promise<PluginWorld> {
  try {
    // The SDK's per-activity failure logs (expected here: the broken plugin) only at WARN.
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Already installed in this process.
  }
  const world = await startWorld(options);
  await isolateLocalSite(world);
  installPluginHost(world.services);
  const events: PluginWorld['events'] = [];
  const original = world.services.events;
  world.services.events = {
    async publish(ctx, event, data) {
      events.push({ event, data });
      await original.publish(ctx, event, data);
    },
  };
  return {
    world,
    events,
    manage: (method, url, key, body) =>
      world.app.inject({
        method: method as 'GET',
        url: `/api/manage/v1${url}`,
        headers: { authorization: `Bearer ${key}` },
        ...(body !== undefined ? { payload: body as object } : {}),
      }),
    keyWith: async (capabilities) => (await createApiKey(world, { capabilities })).key,
    site: () => defaultSiteContext(world),
    close: () => world.close(),
  };
}

/**
 * Points `localhost` at a new workspace with unique ids. Every world bootstraps the same
 * `default` workspace and site ids, and workflow ids are business keys
 * (`export:<workspaceId>:<siteId>`), so two worlds on the shared Temporal server (parallel runs, or
 * an actor left running on the task queue of a world that was killed) would otherwise share one
 * workflow. The world's administrator becomes the new site's administrator.
 */
async function isolateLocalSite(world: World): Promise<void> {
  const { site } = await createWorkspace(world.services, {
    name: 'Plugin tests',
    domains: [],
    admin: { email: world.admin.email, password: world.admin.password, name: 'Administrator', platformOperator: true },
  });
  await world.services.platformDb
    .collection<{ _id: string; siteId: string }>(PLATFORM_COLLECTIONS.meta)
    .updateOne({ _id: DEFAULT_SITE_META_ID }, { $set: { siteId: site._id } });
  await world.services.changeFeed.publish(topics.defaultSite);
}
