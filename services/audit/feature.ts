import type { Feature, IndexSpec } from '../core/feature.ts';
import { AUDIT_COLLECTION } from './model.ts';
import { auditListOperations } from './list-ops.ts';
import { retentionOperations } from './retention-ops.ts';
import { purgeLapsedAuditRows } from './retention.ts';

/**
 * The audit trail (docs/audit.md): the runner's row for every change, `recordChange` for the
 * system's, the lists and the retention setting. Rows live in the workspace's `audit_log` (beside
 * the access feature's failure rows, whose indexes and TTL it declares) and the platform's.
 */
export const auditFeature: Feature = {
  name: 'audit',
  operations: [...auditListOperations, ...retentionOperations],
  indexes: [
    { collection: AUDIT_COLLECTION, keys: { siteId: 1, userId: 1, _id: 1 } },
    { collection: AUDIT_COLLECTION, keys: { siteId: 1, keyId: 1, _id: 1 } },
    { collection: AUDIT_COLLECTION, keys: { siteId: 1, 'target.id': 1, _id: 1 } },
    // The unfiltered list, and its `since`/`until` window riding along on the order.
    { collection: AUDIT_COLLECTION, keys: { siteId: 1, _id: 1 } },
  ],
  async retention(ctx, run) {
    return { removed: { audit: await purgeLapsedAuditRows(ctx.db, ctx.site._id, run.rules.auditDays, run.now, run.budget) } };
  },
};

/** The platform database's audit rows (operator actions): listed newest filters first, dropped by TTL. */
export const platformAuditIndexes: readonly IndexSpec[] = [
  { collection: AUDIT_COLLECTION, keys: { expiresAt: 1 }, options: { expireAfterSeconds: 0 } },
  { collection: AUDIT_COLLECTION, keys: { 'target.id': 1, _id: 1 } },
  { collection: AUDIT_COLLECTION, keys: { userId: 1, _id: 1 } },
  { collection: AUDIT_COLLECTION, keys: { keyId: 1, _id: 1 } },
  { collection: AUDIT_COLLECTION, keys: { action: 1, _id: 1 } },
  // Retention of rows written before `expiresAt` existed.
  { collection: AUDIT_COLLECTION, keys: { at: 1 } },
];
