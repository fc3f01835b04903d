import type { Services } from '../core/context.ts';
import { LOCAL_HOSTS, PLATFORM_COLLECTIONS, type Site, type Workspace } from '../core/tenants.ts';
import { findSiteScope, platformCollections } from './platform-db.ts';
import { createFeedCache } from '../core/feed-cache.ts';
import { createKeyedBatcher } from '../core/batching.ts';
import { topics } from '../core/topics.ts';

export interface SiteScope {
  workspace: Workspace;
  site: Site;
}

/** Where the bootstrap records which site `localhost` means. */
export const DEFAULT_SITE_META_ID = 'default-site';

/** A host's answer and the topics whose changes must drop it (what the lookup read on the way). */
interface HostAnswer {
  scope: SiteScope | null;
  topics: readonly string[];
}

/**
 * Resolves a request's host to its site and workspace (active or suspended: the HTTP layer answers
 * for a suspended one; provisioning, deleting and deleted ones do not resolve). While the change
 * feed vouches for this process (`services.changeFeed.trusted()`) answers come from memory. An
 * answer is tagged with what it read: its host name (`host:<name>`, or `default-site` for the local
 * names), then the site and the workspace it found, even when their state makes it `null`. So a
 * claim, a release, a quota change or a suspension drops exactly the answers it affects and the
 * next request sees it; thousands of other hosts stay cached. Without the feed every request reads
 * (coalesced per host, never joining a read in flight). The workspace document rides in the
 * answer, so workspace state (status, quotas) is as fresh. At most `maxEntries` hosts are held
 * (`SITE_CACHE_ENTRIES`), least recently used evicted first, so thousands of domains (and random
 * Host headers) cost bounded memory.
 */
export function createSiteResolver(services: Pick<Services, 'platformDb' | 'changeFeed' | 'config'>, maxEntries = services.config.SITE_CACHE_ENTRIES) {
  const cache = createFeedCache<HostAnswer>(services.changeFeed, maxEntries);
  const { domains } = platformCollections(services);
  const meta = services.platformDb.collection<{ _id: string; siteId: string }>(PLATFORM_COLLECTIONS.meta);

  async function lookup(host: string): Promise<HostAnswer> {
    const local = LOCAL_HOSTS.has(host);
    const tags = [local ? topics.defaultSite : topics.host(host)];
    const siteId = local ? (await meta.findOne({ _id: DEFAULT_SITE_META_ID }))?.siteId : (await domains.findOne({ _id: host }))?.siteId;
    if (!siteId) return { scope: null, topics: tags };
    tags.push(topics.site(siteId));
    const scope = await findSiteScope(services, siteId);
    if (scope) tags.push(topics.workspace(scope.workspace._id));
    if (!scope || (scope.workspace.status !== 'active' && scope.workspace.status !== 'suspended')) return { scope: null, topics: tags };
    return { scope, topics: tags };
  }
  const coalesced = createKeyedBatcher<null, HostAnswer>(async (host, items) => {
    const answer = await lookup(host);
    return items.map(() => answer);
  });

  return {
    /** The answer held in memory for a host, or undefined when it must be looked up. */
    peek(host: string): SiteScope | null | undefined {
      return cache.peek(host)?.scope;
    },
    /** `peek`, and through a database outage (the public cache-hit lane: core/change-feed.ts `servesThroughOutage`). */
    peekThroughOutage(host: string): SiteScope | null | undefined {
      return cache.peekThroughOutage(host)?.scope;
    },
    async resolve(host: string): Promise<SiteScope | null> {
      return (
        await cache.read(
          host,
          () => coalesced(host, null),
          (answer) => answer.topics,
        )
      ).scope;
    },
    /** Drops this process's answers (operator "clear cache"); changes reach every gateway through the feed. */
    forget(): void {
      cache.clear();
    },
    size: () => cache.size(),
  };
}

export type SiteResolver = ReturnType<typeof createSiteResolver>;
