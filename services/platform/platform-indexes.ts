import type { IndexSpec } from '../core/feature.ts';
import { PLATFORM_COLLECTIONS } from '../core/tenants.ts';
import { STATE_CHANGES_COLLECTION } from '../core/change-feed.ts';
import { platformAuditIndexes } from '../audit/feature.ts';
import { MOVE_CHANGES_COLLECTION } from '../core/placement.ts';

/** The platform database's indexes, created at every start (idempotent; one database per deployment, so not counted per workspace). */
export const platformIndexSpecs: readonly IndexSpec[] = [
  { collection: PLATFORM_COLLECTIONS.sites, keys: { workspaceId: 1 } },
  { collection: PLATFORM_COLLECTIONS.domains, keys: { workspaceId: 1 } },
  // By status: the list's filter (in creation order), the reconciler's stale and unfinished rows.
  { collection: PLATFORM_COLLECTIONS.workspaces, keys: { status: 1, _id: 1 } },
  // The reconciler's overdue purges: `deletion.purgeAt` is kept only while a purge is pending.
  { collection: PLATFORM_COLLECTIONS.workspaces, keys: { status: 1, 'deletion.purgeAt': 1 } },
  // The change feed's poll and its pruning (core/change-feed.ts).
  { collection: STATE_CHANGES_COLLECTION, keys: { at: 1 } },
  // Backups (platform/backup): a workspace's list in creation order, its running one, a backup's parts.
  { collection: 'backups', keys: { workspaceId: 1, _id: 1 } },
  { collection: 'backups', keys: { workspaceId: 1, state: 1 } },
  { collection: 'restores', keys: { workspaceId: 1, state: 1 } },
  { collection: 'backup_parts', keys: { backupId: 1, kind: 1, _id: 1 } },
  // Placement (platform/placement): counts per cluster, the rows each process loads (placed elsewhere
  // or moving), a workspace's running move, a move's recorded writes in order.
  { collection: PLATFORM_COLLECTIONS.workspaces, keys: { cluster: 1, status: 1 } },
  { collection: PLATFORM_COLLECTIONS.workspaces, keys: { 'move.state': 1 }, options: { sparse: true } },
  { collection: 'moves', keys: { workspaceId: 1, state: 1 } },
  { collection: MOVE_CHANGES_COLLECTION, keys: { moveId: 1, pending: 1, _id: 1 } },
  ...platformAuditIndexes,
];
