import type { Services } from '../core/context.ts';
import { LOCAL_HOSTS, PLATFORM_COLLECTIONS, type Site, type Workspace } from '../core/tenants.ts';
import { findSiteScope, platformCollections } from './workspaces.ts';
import { createFeedCache } from '../core/feed-cache.ts';
import { createKeyedBatcher } from '../core/batching.ts';
import { topics } from '../core/topics.ts';

export interface SiteScope {
  workspace: Workspace;
  site: Site;
}

/** Where the bootstrap records which site `localhost` means. */
export const DEFAULT_SITE_META_ID = 'default-site';

/**
 * Resolves a request's host to its site and workspace (active or suspended: the HTTP layer answers
 * for a suspended one; provisioning, deleting and deleted ones do not resolve). While the change
 * feed vouches for this process (`services.changeFeed.trusted()`) answers come from memory and a
 * suspension, a new domain or a quota change is pushed (topics `hosts` and `workspace:<id>`), so the
 * next request sees it; otherwise every request reads (coalesced per host, never joining a read in
 * flight). The workspace document rides in the answer, so workspace state (status, quotas) is as
 * fresh. At most `maxEntries` hosts are held (`SITE_CACHE_ENTRIES`), least recently used evicted
 * first, so thousands of domains (and random Host headers) cost bounded memory.
 */
export function createSiteResolver(services: Pick<Services, 'platformDb' | 'changeFeed' | 'config'>, maxEntries = services.config.SITE_CACHE_ENTRIES) {
  const cache = createFeedCache<SiteScope | null>(services.changeFeed, maxEntries);
  const { domains } = platformCollections(services);
  const meta = services.platformDb.collection<{ _id: string; siteId: string }>(PLATFORM_COLLECTIONS.meta);

  async function lookup(host: string): Promise<SiteScope | null> {
    const siteId = LOCAL_HOSTS.has(host)
      ? (await meta.findOne({ _id: DEFAULT_SITE_META_ID }))?.siteId
      : (await domains.findOne({ _id: host }))?.siteId;
    if (!siteId) return null;
    const scope = await findSiteScope(services, siteId);
    if (!scope || (scope.workspace.status !== 'active' && scope.workspace.status !== 'suspended')) return null;
    return scope;
  }
  const coalesced = createKeyedBatcher<null, SiteScope | null>(async (host, items) => {
    const scope = await lookup(host);
    return items.map(() => scope);
  });

  return {
    /** The answer held in memory for a host, or undefined when it must be looked up. */
    peek(host: string): SiteScope | null | undefined {
      return cache.peek(host);
    },
    resolve(host: string): Promise<SiteScope | null> {
      return cache.read(
        host,
        () => coalesced(host, null),
        (scope) => (scope ? [topics.hosts, topics.workspace(scope.workspace._id)] : [topics.hosts]),
      );
    },
    /** Drops this process's answers (operator "clear cache"); changes reach every gateway through the feed. */
    forget(): void {
      cache.clear();
    },
    size: () => cache.size(),
  };
}

export type SiteResolver = ReturnType<typeof createSiteResolver>;
