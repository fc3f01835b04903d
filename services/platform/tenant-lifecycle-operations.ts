import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { ConflictError, NotFoundError } from '../core/errors.ts';
import type { deleteWorkspaceWorkflow } from '../../workflows/workspace-lifecycle.ts';
import { deleteWorkspaceWorkflowId, deleteWorkspaceWorkflowType } from '../../workflows/contracts/workspace-lifecycle.ts';
import { getWorkspace, setWorkspaceStatus } from './lifecycle.ts';
import { addSite, platformCollections } from './workspaces.ts';
import { withinCountQuota } from './quota-guard.ts';
import { AdminInput, HostName, SiteView, TenantView, tenantView } from './views.ts';

const TenantId = z.object({ id: z.string().min(1) });

export const addTenantSite = defineOperation({
  id: 'tenants.addSite',
  surface: 'manage',
  method: 'POST',
  path: '/tenants/:id/sites',
  summary: 'Add a site to a workspace, with its administrator',
  requires: 'platform:manage',
  errors: [409],
  status: 201,
  input: TenantId.extend({ name: z.string().min(1).max(200), domains: z.array(HostName).min(1).max(50), admin: AdminInput }),
  output: z.object({ site: SiteView }),
  async handler(ctx, { id, ...input }) {
    const workspace = await getWorkspace(ctx.services, id);
    if (workspace.status !== 'active') throw new ConflictError(`Workspace is ${workspace.status}`);
    const sites = platformCollections(ctx.services).sites;
    const count = () => sites.countDocuments({ workspaceId: id });
    const site = await withinCountQuota({ services: ctx.services, workspace, site: null }, 'sites', count, () => addSite(ctx.services, workspace, input));
    return { site: { id: site._id, name: site.name, domains: site.domains } };
  },
});

const statusChange = (action: 'suspend' | 'reactivate') =>
  defineOperation({
    id: `tenants.${action}`,
    surface: 'manage',
    method: 'POST',
    path: `/tenants/:id/${action}`,
    summary: action === 'suspend' ? 'Suspend a workspace: its sites stop answering' : 'Reactivate a suspended workspace',
    requires: 'platform:manage',
    errors: [409],
    input: TenantId,
    output: z.object({ tenant: TenantView }),
    async handler(ctx, { id }) {
      const current = await getWorkspace(ctx.services, id);
      if (id === ctx.workspace._id && action === 'suspend') throw new ConflictError('A workspace cannot suspend itself');
      const updated = await setWorkspaceStatus(ctx.services, id, action === 'suspend' ? 'suspended' : 'active');
      if (!updated) throw new ConflictError(`Workspace is ${current.status}`);
      return { tenant: tenantView(updated) };
    },
  });

export const suspendTenant = statusChange('suspend');
export const reactivateTenant = statusChange('reactivate');

export const deleteTenant = defineOperation({
  id: 'tenants.delete',
  surface: 'manage',
  method: 'DELETE',
  path: '/tenants/:id',
  summary: 'Mark a workspace deleted, release its domains, optionally drop its database',
  description: 'Runs as the Temporal workflow `workspace-delete:<id>`, so it completes even if a process dies half-way.',
  requires: 'platform:manage',
  errors: [409],
  input: TenantId.extend({ dropDatabase: z.enum(['true', 'false']).default('false').transform((v) => v === 'true') }),
  output: z.object({ id: z.string(), status: z.literal('deleted'), domainsReleased: z.number(), databaseDropped: z.boolean() }),
  async handler(ctx, { id, dropDatabase }) {
    if (id === ctx.workspace._id) throw new ConflictError('A workspace cannot delete itself');
    const workspace = await platformCollections(ctx.services).workspaces.findOne({ _id: id });
    if (!workspace || workspace.status === 'deleted') throw new NotFoundError();
    const result = await ctx.services.temporal.client.workflow.execute<typeof deleteWorkspaceWorkflow>(deleteWorkspaceWorkflowType, {
      taskQueue: ctx.services.temporal.taskQueue,
      workflowId: deleteWorkspaceWorkflowId(id),
      args: [{ workspaceId: id, dropDatabase }],
    });
    return { id, status: 'deleted' as const, ...result };
  },
});
