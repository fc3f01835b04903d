/**
 * Change-feed topics (see `change-feed.ts`). A topic names what a change invalidates; caches tag
 * their entries with the topics they depend on.
 */
export const topics = {
  /** Switches, key settings, keys, users and roles of one site (its `accessVersion` moved). */
  siteAccess: (siteId: string) => `site-access:${siteId}`,
  /** What a site's Public API shows (content generation, languages): announced, not awaited. */
  siteContent: (siteId: string) => `site-content:${siteId}`,
  /** A workspace's own state: status (suspension, deletion), quotas. */
  workspace: (workspaceId: string) => `workspace:${workspaceId}`,
  /** A site's webhook endpoints: which are active and what they subscribe to (services/events/outbox.ts). */
  webhookEndpoints: (siteId: string) => `webhook-endpoints:${siteId}`,
  /** Host names, sites and the default site: what a Host resolves to. */
  hosts: 'hosts',
} as const;
