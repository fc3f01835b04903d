import type { LightMyRequestResponse } from 'fastify';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { startWorld, type World, type WorldOptions } from '../support/world.ts';
import { createApiKey, defaultSiteContext } from '../support/access.ts';
import type { Capability } from '../../services/access/capabilities.ts';
import { installPluginHost } from '../../services/plugins/host.ts';

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
