import { z } from 'zod';
import { DEFAULT_CLUSTER } from '../core/clusters.ts';
import { WORKSPACE_STATUSES, type Site, type Workspace } from '../core/tenants.ts';

export const HostName = z
  .string()
  .toLowerCase()
  .regex(/^(?=.{1,253}$)([a-z0-9-]{1,63}\.)*[a-z0-9-]{1,63}$/, 'must be a host name');

export const AdminInput = z.object({
  email: z.email(),
  password: z.string().min(12).max(512),
  name: z.string().max(200).optional(),
});

export const TenantView = z.object({
  id: z.string(),
  name: z.string(),
  status: z.enum(WORKSPACE_STATUSES),
  createdAt: z.string(),
  /** Present once a deletion dropped the workspace's database. */
  databaseDropped: z.boolean().optional(),
  /** A deleted workspace not purged yet: when its purge is due (undelete before). */
  purgeAt: z.string().optional(),
  /** When the purge dropped its database (it cannot be undeleted). */
  purgedAt: z.string().optional(),
  /** A deleted workspace whose due purge waits: why (its final backup failed). */
  purgeHeld: z.string().optional(),
  /** The final backup taken (or being taken) before the purge, when the deletion asked for one. */
  finalBackupId: z.string().optional(),
  /** The MongoDB cluster holding its database (GET /clusters; docs/placement.md). */
  cluster: z.string(),
  /** While it moves to another cluster: the move (GET …/moves/{moveId}). */
  moving: z.object({ moveId: z.string(), to: z.string() }).optional(),
});

export const SiteView = z.object({ id: z.string(), name: z.string(), domains: z.array(z.string()) });

export const tenantView = (w: Workspace) => ({
  id: w._id,
  name: w.name,
  status: w.status,
  createdAt: w.createdAt.toISOString(),
  ...(w.databaseDropped ? { databaseDropped: true } : {}),
  ...(w.deletion?.purgeAt && !w.purgedAt && !w.deletion.purgeHeld ? { purgeAt: w.deletion.purgeAt.toISOString() } : {}),
  ...(w.purgedAt ? { purgedAt: w.purgedAt.toISOString() } : {}),
  ...(w.deletion?.purgeHeld && !w.purgedAt ? { purgeHeld: w.deletion.purgeHeld } : {}),
  ...(w.deletion?.finalBackupId ? { finalBackupId: w.deletion.finalBackupId } : {}),
  cluster: w.cluster ?? DEFAULT_CLUSTER,
  ...(w.move ? { moving: { moveId: w.move.id, to: w.move.to } } : {}),
});
export const siteView = (s: Site) => ({ id: s._id, name: s.name, domains: s.domains });
