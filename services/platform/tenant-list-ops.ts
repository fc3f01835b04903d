import { z } from 'zod';
import type { Filter } from 'mongodb';
import { defineOperation } from '../core/operation.ts';
import { pageById, pageEnvelope, PageQuery } from '../core/paging.ts';
import { WorkspaceSchema, type Workspace } from '../core/tenants.ts';
import { TenantView, tenantView } from './views.ts';
import { platformCollections } from '../tenancy/platform-db.ts';

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Workspaces whose domains contain `q` (a bounded lookup: search is for people, not for export). */
const DOMAIN_MATCH_CAP = 1000;

export const listTenantsOp = defineOperation({
  id: 'tenants.list',
  surface: 'manage',
  method: 'GET',
  path: '/tenants',
  summary: 'List workspaces, optionally filtered by status and searched by name or domain',
  description:
    'Paged like every Management list (`limit`, `cursor`, `page.nextCursor`), in creation order. `q` matches a case-insensitive part of the name or of any of its domains.',
  requires: 'platform:read',
  input: z.object({
    ...PageQuery,
    status: WorkspaceSchema.shape.status.optional(),
    q: z.string().trim().min(1).max(200).optional(),
  }),
  output: pageEnvelope(TenantView),
  async handler(ctx, { status, q, ...page }) {
    const { workspaces, domains } = platformCollections(ctx.services);
    const filter: Filter<Workspace> = {};
    if (status) filter.status = status;
    if (q) {
      const pattern = new RegExp(escapeRegex(q), 'i');
      const byDomain = await domains
        .find({ _id: pattern }, { projection: { workspaceId: 1 } })
        .limit(DOMAIN_MATCH_CAP)
        .toArray();
      filter.$or = [{ name: pattern }, { _id: { $in: [...new Set(byDomain.map((d) => d.workspaceId))] } }];
    }
    const { rows, page: info } = await pageById(ctx, 'tenants', workspaces, filter, page);
    return { data: rows.map(tenantView), page: info };
  },
});
