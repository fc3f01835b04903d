import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { NotFoundError } from '../core/errors.ts';
import { createWorkspace, platformCollections } from './workspaces.ts';

const hostName = z
  .string()
  .toLowerCase()
  .regex(/^(?=.{1,253}$)([a-z0-9-]{1,63}\.)*[a-z0-9-]{1,63}$/, 'must be a host name');

const TenantView = z.object({
  id: z.string(),
  name: z.string(),
  status: z.enum(['active', 'suspended', 'deleted']),
  createdAt: z.string(),
});

const SiteView = z.object({ id: z.string(), name: z.string(), domains: z.array(z.string()) });

export const listTenants = defineOperation({
  id: 'tenants.list',
  surface: 'manage',
  method: 'GET',
  path: '/tenants',
  summary: 'List workspaces',
  requires: 'platform',
  input: z.object({}),
  output: z.object({ data: z.array(TenantView) }),
  async handler(ctx) {
    const rows = await platformCollections(ctx.services).workspaces.find({}).sort({ _id: 1 }).limit(1000).toArray();
    return {
      data: rows.map((w) => ({ id: w._id, name: w.name, status: w.status, createdAt: w.createdAt.toISOString() })),
    };
  },
});

export const createTenant = defineOperation({
  id: 'tenants.create',
  surface: 'manage',
  method: 'POST',
  path: '/tenants',
  summary: 'Create a workspace with its first site and administrator',
  requires: 'platform',
  status: 201,
  input: z.object({
    name: z.string().min(1).max(200),
    siteName: z.string().min(1).max(200).optional(),
    domains: z.array(hostName).min(1).max(50),
    admin: z.object({ email: z.email(), password: z.string().min(12).max(512), name: z.string().max(200).optional() }),
  }),
  output: z.object({ tenant: TenantView, site: SiteView }),
  async handler(ctx, input) {
    const { workspace, site } = await createWorkspace(ctx.services, input);
    return {
      tenant: { id: workspace._id, name: workspace.name, status: workspace.status, createdAt: workspace.createdAt.toISOString() },
      site: { id: site._id, name: site.name, domains: site.domains },
    };
  },
});

export const getTenant = defineOperation({
  id: 'tenants.get',
  surface: 'manage',
  method: 'GET',
  path: '/tenants/:id',
  summary: 'One workspace with its sites',
  requires: 'platform',
  input: z.object({ id: z.string() }),
  output: z.object({ tenant: TenantView, sites: z.array(SiteView) }),
  async handler(ctx, { id }) {
    const { workspaces, sites } = platformCollections(ctx.services);
    const workspace = await workspaces.findOne({ _id: id });
    if (!workspace) throw new NotFoundError();
    const siteRows = await sites.find({ workspaceId: id }).toArray();
    return {
      tenant: { id: workspace._id, name: workspace.name, status: workspace.status, createdAt: workspace.createdAt.toISOString() },
      sites: siteRows.map((s) => ({ id: s._id, name: s.name, domains: s.domains })),
    };
  },
});
