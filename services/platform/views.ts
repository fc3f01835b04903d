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

/**
 * Limits and feature switches: free-form keys (e.g. `mediaLibraryBytes`, `mediaAllowedTypes`);
 * `null` or `''` means no limit (contract 2.4). A PUT replaces the whole set.
 */
export const Quotas = z.record(
  z.string().regex(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/, 'quota names are letters, digits, _ . -'),
  z.union([z.number().nonnegative(), z.boolean(), z.null(), z.literal(''), z.array(z.string().max(200)).max(200)]),
);
