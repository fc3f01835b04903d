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
  cluster: w.cluster ?? DEFAULT_CLUSTER,
  ...(w.move ? { moving: { moveId: w.move.id, to: w.move.to } } : {}),
});
export const siteView = (s: Site) => ({ id: s._id, name: s.name, domains: s.domains });
