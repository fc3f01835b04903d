import { z } from 'zod';

/** A workspace (tenant) owns one MongoDB database and one or more sites. */
export const WorkspaceSchema = z.object({
  _id: z.string(),
  name: z.string(),
  status: z.enum(['active', 'suspended', 'deleted']),
  dbName: z.string(),
  quotas: z.record(z.string(), z.unknown()).default({}),
  createdAt: z.date(),
  updatedAt: z.date(),
});
export type Workspace = z.infer<typeof WorkspaceSchema>;

export const SiteSchema = z.object({
  _id: z.string(),
  workspaceId: z.string(),
  name: z.string(),
  /** Lower-case host names (no port) that resolve to this site. */
  domains: z.array(z.string()),
  quotas: z.record(z.string(), z.unknown()).default({}),
  createdAt: z.date(),
  updatedAt: z.date(),
});
export type Site = z.infer<typeof SiteSchema>;

/** One row per host name: the unique index on `_id` makes a host belong to one site only. */
export interface DomainRow {
  _id: string;
  siteId: string;
  workspaceId: string;
}

export const PLATFORM_COLLECTIONS = {
  workspaces: 'workspaces',
  sites: 'sites',
  domains: 'domains',
  meta: 'platform_meta',
} as const;

/** Host names that always mean "the default site", for local development. */
export const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export function normalizeHost(hostHeader: string | undefined): string {
  if (!hostHeader) return '';
  const host = hostHeader.trim().toLowerCase();
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  return host.split(':')[0];
}
