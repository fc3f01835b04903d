/**
 * Change-feed topics (see `change-feed.ts`). A topic names what a change invalidates; caches tag
 * their entries with the topics they depend on.
 */
export const topics = {
  /** Switches, key settings, keys, users and roles of one site (its `accessVersion` moved). */
  siteAccess: (siteId: string) => `site-access:${siteId}`,
  /** What a site's Public API shows (content generation, languages): announced, not awaited. */
  siteContent: (siteId: string) => `site-content:${siteId}`,
  /** A site's languages as the write path validates locales against them: published, awaited. */
  siteLanguages: (siteId: string) => `site-languages:${siteId}`,
  /** A workspace's own state: status (suspension, deletion), quotas. */
  workspace: (workspaceId: string) => `workspace:${workspaceId}`,
  /** What one Host name resolves to (its domain row): claims and releases name the hosts they touch. */
  host: (name: string) => `host:${name}`,
  /** Which site `localhost` means (the platform's default-site row). */
  defaultSite: 'default-site',
  /** A site's own row as hosts carry it (quotas, switches). */
  site: (siteId: string) => `site:${siteId}`,
  /** Writes to the watched collections of one workspace database by one process (core/write-watch.ts): announced, not awaited. */
  dbWrites: (dbName: string, origin: string) => `db-writes:${origin}:${dbName}`,
  /** A site's webhook endpoints: which are active and what they subscribe to (services/events/outbox.ts). */
  webhookEndpoints: (siteId: string) => `webhook-endpoints:${siteId}`,
} as const;
