import { z } from 'zod';
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
});

export const SiteView = z.object({ id: z.string(), name: z.string(), domains: z.array(z.string()) });

export const tenantView = (w: Workspace) => ({
  id: w._id,
  name: w.name,
  status: w.status,
  createdAt: w.createdAt.toISOString(),
  ...(w.databaseDropped ? { databaseDropped: true } : {}),
});
export const siteView = (s: Site) => ({ id: s._id, name: s.name, domains: s.domains });
