import type { Services } from '../core/context.ts';
import { LOCAL_HOSTS, PLATFORM_COLLECTIONS, type Site, type Workspace } from '../core/tenants.ts';
import { platformCollections } from './workspaces.ts';

export interface SiteScope {
  workspace: Workspace;
  site: Site;
}

/** Where the bootstrap records which site `localhost` means. */
export const DEFAULT_SITE_META_ID = 'default-site';

/**
 * Resolves a request's host to its site and workspace (active or suspended: the HTTP layer answers
 * for a suspended one; provisioning, deleting and deleted ones do not resolve). Answers are cached
 * for a few seconds per gateway: a new domain or a suspension reaches every gateway within `ttlMs`
 * without a restart, and the hot path costs no database round trip. The cache holds at most
 * `maxEntries` hosts, least recently used evicted first, so thousands of domains (and random Host
 * headers) cost bounded memory.
 */
export function createSiteResolver(services: Services, ttlMs = 3000, maxEntries = services.config.SITE_CACHE_ENTRIES) {
  const cache = new Map<string, { scope: SiteScope | null; expires: number }>();
  const { workspaces, sites, domains } = platformCollections(services);
  const meta = services.platformDb.collection<{ _id: string; siteId: string }>(PLATFORM_COLLECTIONS.meta);

  async function lookup(host: string): Promise<SiteScope | null> {
    const siteId = LOCAL_HOSTS.has(host)
      ? (await meta.findOne({ _id: DEFAULT_SITE_META_ID }))?.siteId
      : (await domains.findOne({ _id: host }))?.siteId;
    if (!siteId) return null;
    const site = await sites.findOne({ _id: siteId });
    if (!site) return null;
    const workspace = await workspaces.findOne({ _id: site.workspaceId });
    if (!workspace || (workspace.status !== 'active' && workspace.status !== 'suspended')) return null;
    return { workspace, site };
  }

  return {
    /** The cached answer for a host, or undefined when it must be looked up. */
    peek(host: string): SiteScope | null | undefined {
      const hit = cache.get(host);
      return hit && hit.expires > Date.now() ? hit.scope : undefined;
    },
    async resolve(host: string): Promise<SiteScope | null> {
      const now = Date.now();
      const hit = cache.get(host);
      if (hit && hit.expires > now) return hit.scope;
      const scope = await lookup(host);
      // Re-inserting moves the host to the young end of the Map's order; the oldest goes when full.
      cache.delete(host);
      cache.set(host, { scope, expires: now + ttlMs });
      if (cache.size > maxEntries) cache.delete(cache.keys().next().value!);
      return scope;
    },
    forget(): void {
      cache.clear();
    },
    size: () => cache.size,
  };
}

export type SiteResolver = ReturnType<typeof createSiteResolver>;
