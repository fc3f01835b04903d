import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { NotFoundError } from '../core/errors.ts';
import { UsageView } from '../tenancy/quota-model.ts';
import { siteUsage, workspaceUsage } from './usage.ts';
import { findSiteScope, platformCollections } from '../tenancy/platform-db.ts';

const Id = z.object({ id: z.string().min(1).max(64) });

export const tenantUsageOp = defineOperation({
  id: 'tenants.usage',
  surface: 'manage',
  method: 'GET',
  path: '/tenants/:id/usage',
  summary: 'Each quota of a workspace: current value and limit, and its switches',
  description: 'Shape documented in docs/platform.md (stable: the operator console draws from it). `limit: null` means no limit.',
  requires: 'platform:read',
  input: Id,
  output: UsageView,
  async handler(ctx, { id }) {
    const workspace = await platformCollections(ctx.services).workspaces.findOne({ _id: id });
    if (!workspace) throw new NotFoundError();
    return workspaceUsage(ctx.services, workspace);
  },
});

export const siteUsageOp = defineOperation({
  id: 'sites.usage',
  surface: 'manage',
  method: 'GET',
  path: '/sites/:id/usage',
  summary: 'Each quota of a site: current value and effective limit (the tighter of site and workspace)',
  description: 'Shape documented in docs/platform.md. Workspace-only limits (`sites`, `requestsPerMinute`) show the workspace figures.',
  requires: 'platform:read',
  input: Id,
  output: UsageView,
  async handler(ctx, { id }) {
    const scope = await findSiteScope(ctx.services, id);
    if (!scope) throw new NotFoundError();
    return siteUsage(ctx.services, scope.workspace, scope.site);
  },
});

export const usageOperations = [tenantUsageOp, siteUsageOp];
