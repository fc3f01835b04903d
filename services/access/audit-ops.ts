import { z } from 'zod';
import { defineOperation, type Surface } from '../core/operation.ts';
import { accessCollections } from './model.ts';
import { pageById, pageEnvelope, PageQuery } from '../core/paging.ts';

const AuditView = z.object({
  id: z.string(),
  at: z.string(),
  action: z.string(),
  keyId: z.string().nullable(),
  userId: z.string().nullable(),
  ip: z.string(),
  reason: z.string().nullable(),
  /** How many failures this row stands for (failed authentications are aggregated per window). */
  count: z.number().int(),
  lastAt: z.string(),
});

const defineList = (surface: Surface) =>
  defineOperation({
    id: surface === 'manage' ? 'audit.list' : 'audit.admin.list',
    surface,
    method: 'GET',
    path: '/audit',
    summary: 'Audit log: key creation, rotation, revocation and authentication failures (oldest first)',
    requires: 'site:admin',
    input: z.object({ ...PageQuery, action: z.string().max(64).optional(), keyId: z.string().max(64).optional() }),
    output: pageEnvelope(AuditView),
    async handler(ctx, { action, keyId, ...query }) {
      const filter = { siteId: ctx.site._id, ...(action ? { action } : {}), ...(keyId ? { keyId } : {}) };
      const { rows, page } = await pageById(ctx, 'audit', accessCollections(ctx.db).audit, filter, query);
      return {
        data: rows.map((row) => ({ id: row._id, at: row.at.toISOString(), action: row.action, keyId: row.keyId, userId: row.userId, ip: row.ip, reason: row.reason, count: row.count ?? 1, lastAt: (row.lastAt ?? row.at).toISOString() })),
        page,
      };
    },
  });

export const auditOperations = [defineList('manage'), defineList('admin')];
