import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { ConflictError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { hostNames } from '../core/tenants.ts';
import { getWorkspace } from './lifecycle.ts';
import { addSite } from './workspaces.ts';
import { platformCollections } from '../tenancy/platform-db.ts';
import { claimDomains } from './domains.ts';
import { withinCountQuota } from '../tenancy/quota-guard.ts';
import { AdminInput, HostName, SiteView } from './views.ts';

const TenantId = z.object({ id: z.string().min(1) });

export const addTenantSiteOp = defineOperation({
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
    const count = (_siteId: string | null, bound: number) => sites.countDocuments({ workspaceId: id }, { limit: bound });
    const site = await withinCountQuota({ services: ctx.services, workspace, site: null }, 'sites', count, async () => {
      const siteId = newId();
      const domains = hostNames(input.domains);
      await claimDomains(ctx.services, { workspaceId: id, siteId }, domains);
      return addSite(ctx.services, workspace, { ...input, siteId, domains });
    });
    return { site: { id: site._id, name: site.name, domains: site.domains } };
  },
});
