import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { topics } from '../core/topics.ts';
import { NotFoundError } from '../core/errors.ts';
import { platformCollections } from '../tenancy/platform-db.ts';
import { DEFAULT_RETENTION_DAYS, RETENTION_LIMITS } from './rows.ts';
import { recordChange } from './record.ts';

const Retention = z.object({
  workspaceId: z.string(),
  /** Days the workspace's audit rows are kept (every site of the workspace). */
  days: z.number().int(),
  default: z.number().int(),
});

const getRetention = defineOperation({
  id: 'audit.retention.get',
  surface: 'manage',
  method: 'GET',
  path: '/audit/retention',
  summary: "How long the workspace's audit rows are kept",
  requires: 'site:admin',
  input: z.object({}),
  output: Retention,
  async handler(ctx) {
    const workspace = await platformCollections(ctx.services).workspaces.findOne({ _id: ctx.workspace._id }, { projection: { auditRetentionDays: 1 } });
    return { workspaceId: ctx.workspace._id, days: workspace?.auditRetentionDays ?? DEFAULT_RETENTION_DAYS, default: DEFAULT_RETENTION_DAYS };
  },
});

const putRetention = defineOperation({
  id: 'audit.retention.put',
  surface: 'manage',
  method: 'PUT',
  path: '/audit/retention',
  summary: "Set how long the workspace's audit rows are kept",
  description: `From ${RETENTION_LIMITS.min} to ${RETENTION_LIMITS.max} days. Shorter applies to older rows at the next retention pass; longer, to rows written from now on.`,
  requires: 'site:admin',
  input: z.object({ days: z.number().int().min(RETENTION_LIMITS.min).max(RETENTION_LIMITS.max) }).strict(),
  output: Retention,
  audit: { target: (_input, output) => ({ kind: 'workspace', id: output.workspaceId }) },
  async handler(ctx, { days }) {
    const before = await platformCollections(ctx.services).workspaces.findOneAndUpdate(
      { _id: ctx.workspace._id },
      { $set: { auditRetentionDays: days, updatedAt: ctx.services.clock.now() } },
      { returnDocument: 'before', projection: { auditRetentionDays: 1 } },
    );
    if (!before) throw new NotFoundError();
    recordChange(ctx, {
      action: 'audit.retention.put',
      target: { kind: 'workspace', id: ctx.workspace._id },
      summary: { changes: { days: { from: before.auditRetentionDays ?? DEFAULT_RETENTION_DAYS, to: days } } },
    });
    // Processes holding the workspace's row pick the new value up (rows written next carry it).
    await ctx.services.changeFeed.publish(topics.workspace(ctx.workspace._id));
    return { workspaceId: ctx.workspace._id, days, default: DEFAULT_RETENTION_DAYS };
  },
});

export const retentionOperations = [getRetention, putRetention];
