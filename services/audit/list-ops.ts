import { z } from 'zod';
import type { Filter } from 'mongodb';
import { defineOperation, type Surface } from '../core/operation.ts';
import { pageById, pageEnvelope, PageQuery } from '../core/paging.ts';
import type { OperationContext } from '../core/context.ts';
import type { AuditDoc } from './model.ts';
import { platformAudit, workspaceAudit } from './rows.ts';

const AuditView = z.object({
  id: z.string(),
  at: z.string(),
  /** `key.created`, `auth.failed`, an operation id (`content.update`) or an event-like name of a workflow's change. */
  action: z.string(),
  /** The operation that made the change; null for failures and a workflow's own changes. */
  operation: z.string().nullable(),
  /** The actor: its user (a key's owner) and key; for failure rows the key or user that failed. */
  keyId: z.string().nullable(),
  userId: z.string().nullable(),
  /** A change made by the system (workflow, activity): why. */
  system: z.string().nullable(),
  workspaceId: z.string().nullable(),
  siteId: z.string(),
  target: z.object({ kind: z.string(), id: z.string() }).nullable(),
  summary: z
    .object({
      fields: z.array(z.string()).optional(),
      changes: z.record(z.string(), z.object({ from: z.unknown().optional(), to: z.unknown().optional() })).optional(),
      note: z.string().optional(),
      affected: z.record(z.string(), z.number()).optional(),
    })
    .nullable(),
  requestId: z.string().nullable(),
  ip: z.string(),
  reason: z.string().nullable(),
  /** How many failures this row stands for (failed authentications are aggregated per window). */
  count: z.number().int(),
  lastAt: z.string(),
});

const id = z.string().min(1).max(64);
const AuditQuery = z.object({
  ...PageQuery,
  action: z.string().max(64).optional(),
  /** A user id or key id (the actor), or `system`. */
  actor: id.optional(),
  keyId: id.optional(),
  targetKind: z.string().max(64).optional(),
  targetId: z.string().min(1).max(200).optional(),
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
});
type AuditFilters = z.output<typeof AuditQuery>;

function auditFilter(query: Omit<AuditFilters, 'limit' | 'cursor'>, where: Filter<AuditDoc>): Filter<AuditDoc> {
  const filter: Filter<AuditDoc> = { ...where };
  if (query.action) filter.action = query.action;
  if (query.keyId) filter.keyId = query.keyId;
  if (query.actor === 'system') filter.system = { $ne: null };
  else if (query.actor) filter.$or = [{ userId: query.actor }, { keyId: query.actor }];
  if (query.targetKind) filter['target.kind'] = query.targetKind;
  if (query.targetId) filter['target.id'] = query.targetId;
  if (query.since || query.until)
    filter.at = { ...(query.since ? { $gte: new Date(query.since) } : {}), ...(query.until ? { $lt: new Date(query.until) } : {}) };
  return filter;
}

const view = (row: AuditDoc): z.input<typeof AuditView> => ({
  id: row._id,
  at: row.at.toISOString(),
  action: row.action,
  operation: row.operation ?? null,
  keyId: row.keyId,
  userId: row.userId,
  system: row.system ?? null,
  workspaceId: row.workspaceId ?? null,
  siteId: row.siteId,
  target: row.target ?? null,
  summary: row.summary ?? null,
  requestId: row.requestId ?? null,
  ip: row.ip,
  reason: row.reason,
  count: row.count ?? 1,
  lastAt: (row.lastAt ?? row.at).toISOString(),
});

async function listed(ctx: OperationContext, list: string, platform: boolean, { limit, cursor, ...query }: AuditFilters) {
  const collection = platform ? platformAudit(ctx) : workspaceAudit(ctx.db);
  const { rows, page } = await pageById(ctx, list, collection, auditFilter(query, platform ? {} : { siteId: ctx.site._id }), { limit, cursor });
  return { data: rows.map(view), page };
}

const FILTERS =
  'Filters: `actor` (a user id, a key id, or `system`), `targetKind`/`targetId`, `action`, `since`/`until` (ISO times), `keyId`. Oldest first, cursor-paged.';

const siteList = (surface: Surface) =>
  defineOperation({
    id: surface === 'manage' ? 'audit.list' : 'audit.admin.list',
    surface,
    method: 'GET',
    path: '/audit',
    summary: "The site's audit log: every change, key administration and authentication failures",
    description: FILTERS,
    requires: 'site:admin',
    input: AuditQuery,
    output: pageEnvelope(AuditView),
    handler: (ctx, query) => listed(ctx, 'audit', false, query),
  });

const platformList = (surface: Surface) =>
  defineOperation({
    id: surface === 'manage' ? 'platformAudit.list' : 'console.audit.list',
    surface,
    method: 'GET',
    path: '/platform/audit',
    summary: 'The platform audit log: every operator action (workspaces, sites, quotas, switches, operators)',
    description: FILTERS,
    requires: 'platform:read',
    input: AuditQuery,
    output: pageEnvelope(AuditView),
    handler: (ctx, query) => listed(ctx, 'platform-audit', true, query),
  });

export const auditListOperations = [siteList('manage'), siteList('admin'), platformList('manage'), platformList('admin')];
