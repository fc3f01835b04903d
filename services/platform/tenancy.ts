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
 * Resolves a request's host to its site and workspace. Hits are cached for a few seconds per
 * gateway: a new domain or a suspension reaches every gateway within `ttlMs` without a restart,
 * and the hot path costs no database round trip.
 */
export function createSiteResolver(services: Services, ttlMs = 3000) {
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
    if (!workspace || workspace.status !== 'active') return null;
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
      if (cache.size > 10_000) cache.clear();
      cache.set(host, { scope, expires: now + ttlMs });
      return scope;
    },
    forget(): void {
      cache.clear();
    },
    size: () => cache.size,
  };
}

export type SiteResolver = ReturnType<typeof createSiteResolver>;
