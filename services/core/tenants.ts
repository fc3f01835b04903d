import { z } from 'zod';

/** Statuses a workspace can hold. `provisioning` and `deleting` are workspace actor steps in progress. */
export const WORKSPACE_STATUSES = ['provisioning', 'active', 'suspended', 'deleting', 'deleted'] as const;
export type WorkspaceStatus = (typeof WORKSPACE_STATUSES)[number];

/** A move's steps as every process routes by them (core/placement.ts): writes recorded, held, or going to the new cluster. */
export const MOVE_STATES = ['copying', 'switching', 'switched'] as const;
export type MoveState = (typeof MOVE_STATES)[number];

/** A workspace (tenant) owns one MongoDB database and one or more sites. */
export const WorkspaceSchema = z.object({
  _id: z.string(),
  name: z.string(),
  /** provisioning → active ⇄ suspended → deleting → deleted; moved only by the workspace actor. */
  status: z.enum(WORKSPACE_STATUSES),
  dbName: z.string(),
  quotas: z.record(z.string(), z.unknown()).default({}),
  /** What the actor provisions (present while `provisioning`); the password is already hashed. */
  provisioning: z
    .object({
      siteId: z.string(),
      siteName: z.string(),
      domains: z.array(z.string()),
      admin: z.object({ email: z.string(), name: z.string().optional(), passwordHash: z.string(), platformOperator: z.boolean().optional() }),
    })
    .optional(),
  /**
   * A workspace being cloned (`POST /tenants { fromBackup | fromWorkspace }`, docs/backups.md): where
   * from, each source site's new id (the first takes the request's domains), and the parts loaded.
   * Present while `provisioning`; the actor's provision steps leave such a row to the clone workflow.
   */
  clone: z
    .object({
      sourceWorkspaceId: z.string(),
      backupId: z.string().nullable(),
      /** The backup was taken for this clone (`fromWorkspace`): removed once the clone ends. */
      ownBackup: z.boolean(),
      sites: z.array(z.object({ from: z.string(), to: z.string(), name: z.string() })),
      doneParts: z.array(z.string()).optional(),
      error: z.string().optional(),
    })
    .optional(),
  /**
   * Set when deletion was asked (removed by an undelete). `dropDatabase`: purge at once (any request
   * that asked for it); `purgeAt`: the end of the grace period; `previousStatus`: what an undelete
   * brings back; `finalBackup`: a backup is taken before the purge, `finalBackupId` the last one
   * started; `purgeHeld`: why a due purge did not run (its final backup failed). docs/lifecycle.md.
   */
  deletion: z
    .object({
      dropDatabase: z.boolean(),
      requestedAt: z.date(),
      purgeAt: z.date().optional(),
      previousStatus: z.enum(['active', 'suspended']).optional(),
      finalBackup: z.boolean().optional(),
      finalBackupId: z.string().optional(),
      purgeHeld: z.string().optional(),
    })
    .optional(),
  databaseDropped: z.boolean().optional(),
  /** When the purge dropped the database: the row stays as a record, and cannot be undeleted. */
  purgedAt: z.date().optional(),
  /** The last undelete: when, and the host names another site had claimed meanwhile (not restored). */
  undeletion: z.object({ at: z.date(), domainsNotRestored: z.array(z.string()) }).optional(),
  /** The index version (`services/tenancy/index-version.ts`) the workspace database has. */
  indexVersion: z.string().optional(),
  /** Days the workspace's audit rows are kept (`services/audit/retention.ts`); 90 when unset. */
  auditRetentionDays: z.number().int().optional(),
  /** Set while a backup copies the workspace: change operations answer 423 (docs/backups.md, consistency). */
  writeHold: z.object({ backupId: z.string(), since: z.date() }).nullable().optional(),
  /** The cluster holding the database (docs/placement.md); absent: the default one (MONGODB_URI). */
  cluster: z.string().optional(),
  /** Set while the workspace moves to another cluster (`platform/placement/`): its step, pushed to every process. */
  move: z.object({ id: z.string(), to: z.string(), state: z.enum(MOVE_STATES) }).optional(),
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

/** Host names that mean "the default site" to a client on this machine (`requestHost`), for local development. */
export const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** 127/8, `::1` (also as IPv4-mapped `::ffff:127.x.y.z`), and the name `localhost` (a listen address). */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const bare = address.toLowerCase().replace(/^\[|\]$/g, '');
  return bare === 'localhost' || bare === '::1' || /^(?:::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

/**
 * The host name a request resolves its site with (the full path and the lanes in front of
 * Fastify both ask here). The local names reach the default (platform) site only from this
 * machine: the TCP peer (the socket's address, never a forwarded one) is loopback, or the gateway
 * listens on loopback only, where every peer is. A client elsewhere sending `Host: localhost`
 * through a public listener gets the unknown-host 404 ('' resolves to no site; docs/access.md).
 */
export function requestHost(hostHeader: string | undefined, peerAddress: string | undefined, listenHost: string): string {
  const host = normalizeHost(hostHeader);
  if (!LOCAL_HOSTS.has(host) || isLoopback(listenHost) || isLoopback(peerAddress)) return host;
  return '';
}

export function normalizeHost(hostHeader: string | undefined): string {
  if (!hostHeader) return '';
  const host = hostHeader.trim().toLowerCase();
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const port = host.indexOf(':');
  return port === -1 ? host : host.slice(0, port);
}

/** A site's host names as stored and claimed: lower case, each once. */
export function hostNames(domains: readonly string[]): string[] {
  return [...new Set(domains.map((domain) => domain.toLowerCase()))];
}
