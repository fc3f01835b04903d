import type { LightMyRequestResponse } from 'fastify';
import { startWorld, type World } from '../support/world.ts';
import { createApiKey, defaultSiteContext } from '../support/access.ts';
import { CAPABILITIES, type Capability } from '../../services/core/capabilities.ts';
import type { KeyScope } from '../../services/core/principal.ts';

/** A world with an all-capabilities key and HTTP helpers for the Management and Public surfaces. */
export interface SiteWorld {
  world: World;
  key: string;
  manage(method: string, url: string, body?: unknown, key?: string): Promise<LightMyRequestResponse>;
  pub(method: string, url: string, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  keyWith(capabilities: Capability[], scope?: KeyScope): Promise<string>;
  /** Creates and publishes an entry through the Management API; returns its id. */
  published(body: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

export async function startSiteWorld(): Promise<SiteWorld> {
  const world = await startWorld();
  const key = (await createApiKey(world, { capabilities: [...CAPABILITIES] })).key;
  const manage: SiteWorld['manage'] = (method, url, body, useKey = key) =>
    world.app.inject({
      method: method as 'GET',
      url: `/api/manage/v1${url}`,
      headers: { authorization: `Bearer ${useKey}` },
      ...(body !== undefined ? { payload: body as object } : {}),
    });
  return {
    world,
    key,
    manage,
    pub: (method, url, body, headers = {}) =>
      world.app.inject({ method: method as 'GET', url: `/api/v1${url}`, headers, ...(body !== undefined ? { payload: body as object } : {}) }),
    keyWith: async (capabilities, scope) => (await createApiKey(world, { capabilities, scope })).key,
    async published(body) {
      const created = await manage('POST', '/content', body);
      if (created.statusCode !== 201) throw new Error(`create failed: ${created.statusCode} ${created.body}`);
      const id = created.json().id as string;
      const res = await manage('POST', `/content/${id}/publish`, {});
      if (res.statusCode !== 200) throw new Error(`publish failed: ${res.statusCode} ${res.body}`);
      return id;
    },
    close: () => world.close(),
  };
}

export { defaultSiteContext };
