import { topics } from '../core/topics.ts';
import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { NotFoundError } from '../core/errors.ts';
import { platformCollections } from '../tenancy/platform-db.ts';
import { SiteView, TenantView, siteView, tenantView } from './views.ts';
import { SiteQuotas, WorkspaceQuotas } from '../tenancy/quota-model.ts';
import { syncBackupSchedule } from './backup/schedule.ts';

export const getTenantOp = defineOperation({
  id: 'tenants.get',
  surface: 'manage',
  method: 'GET',
  path: '/tenants/:id',
  summary: 'One workspace with its sites',
  requires: 'platform:read',
  input: z.object({ id: z.string() }),
  output: z.object({ tenant: TenantView, sites: z.array(SiteView) }),
  async handler(ctx, { id }) {
    const { workspaces, sites } = platformCollections(ctx.services);
    const workspace = await workspaces.findOne({ _id: id });
    if (!workspace) throw new NotFoundError();
    const siteRows = await sites.find({ workspaceId: id }).toArray();
    return { tenant: tenantView(workspace), sites: siteRows.map(siteView) };
  },
});

/** GET and PUT of quotas, for workspaces (`/tenants/:id/quotas`) and sites (`/sites/:id/quotas`). */
function quotaOperations(kind: 'tenants' | 'sites') {
  const collection = (ctx: Parameters<typeof getTenantOp.handler>[0]) =>
    kind === 'tenants' ? platformCollections(ctx.services).workspaces : platformCollections(ctx.services).sites;
  const noun = kind === 'tenants' ? 'workspace' : 'site';
  const Quotas = kind === 'tenants' ? WorkspaceQuotas : SiteQuotas;
  return [
    defineOperation({
      id: `${kind}.getQuotas`,
      surface: 'manage',
      method: 'GET',
      path: `/${kind}/:id/quotas`,
      summary: `Limits and feature switches of a ${noun}`,
      requires: 'platform:read',
      input: z.object({ id: z.string() }),
      output: z.object({ quotas: Quotas }),
      async handler(ctx, { id }) {
        const row = await (collection(ctx) as ReturnType<typeof platformCollections>['sites']).findOne({ _id: id });
        if (!row) throw new NotFoundError();
        return { quotas: (row.quotas ?? {}) as z.input<typeof Quotas> };
      },
    }),
    defineOperation({
      id: `${kind}.setQuotas`,
      surface: 'manage',
      method: 'PUT',
      path: `/${kind}/:id/quotas`,
      summary: `Replace the limits and feature switches of a ${noun}; null or empty means no limit`,
      description: 'The typed set of docs/platform.md; an unknown name is a 400 and nothing changes.',
      requires: 'platform:manage',
      input: z.object({ id: z.string(), quotas: Quotas }),
      output: z.object({ quotas: Quotas }),
      async handler(ctx, { id, quotas }) {
        // A schedule set now or before is (re)synced; a PUT that never had one does not touch Temporal.
        const before = kind === 'tenants' ? await platformCollections(ctx.services).workspaces.findOne({ _id: id }, { projection: { quotas: 1 } }) : null;
        const result = await (collection(ctx) as ReturnType<typeof platformCollections>['sites']).updateOne(
          { _id: id },
          { $set: { quotas, updatedAt: ctx.services.clock.now() } },
        );
        if (result.matchedCount === 0) throw new NotFoundError();
        const schedule = kind === 'tenants' ? ((quotas as z.output<typeof WorkspaceQuotas>).backupSchedule ?? null) : null;
        if (schedule || before?.quotas?.backupSchedule) await syncBackupSchedule(ctx.services, id, schedule);
        // Hosts carry their workspace's and their site's rows, quotas included.
        await ctx.services.changeFeed.publish(kind === 'tenants' ? topics.workspace(id) : topics.site(id));
        return { quotas };
      },
    }),
  ];
}

export const quotaOperationsList = [...quotaOperations('tenants'), ...quotaOperations('sites')];
