import type { Feature } from '../core/feature.ts';
import { onConsole } from './console-ops.ts';
import { getTenantOp, quotaOperationsList } from './tenant-ops.ts';
import { listTenantsOp } from './tenant-list-ops.ts';
import { usageOperations } from './usage-ops.ts';
import { operatorOperations } from './operator-ops.ts';
import { addTenantSiteOp } from './site-ops.ts';
import { healthOperations } from './health.ts';
import { backupOperations } from './backup/backup-ops.ts';
import { stopBackupSchedule, syncBackupSchedule } from './backup/schedule.ts';
import { stopWorkspaceBackups } from './backup/control.ts';
import type { z } from 'zod';
import type { WorkspaceQuotas } from '../tenancy/quota-model.ts';
import { undeleteTenantOp } from './undelete-ops.ts';
import { placementOperations } from './placement/placement-ops.ts';
import { SITE_STATE_COLLECTION, SITE_STATE_KINDS, siteStateKindRange } from '../core/site-state.ts';
import { createTenantOp, deleteTenantOp, reactivateTenant, suspendTenant } from './lifecycle-ops.ts';

const platformOperations = [
  listTenantsOp,
  createTenantOp,
  getTenantOp,
  addTenantSiteOp,
  suspendTenant,
  reactivateTenant,
  deleteTenantOp,
  undeleteTenantOp,
  ...quotaOperationsList,
  ...usageOperations,
  ...backupOperations,
  ...placementOperations,
];

export const platformFeature: Feature = {
  name: 'platform',
  // The same operations again on the cookie session, for the operator console (console-operations.ts).
  // Managing operators stays on the API (keys with platform:manage), not in the console.
  // Health and diagnostics answer any valid key (site:admin for the details), not only operators.
  operations: [...platformOperations, ...operatorOperations, ...onConsole(platformOperations), ...healthOperations],
  // A deleted workspace is no longer backed up on schedule, and a backup or restore running is stopped.
  async stopWork(services, workspace) {
    const stopped = await stopWorkspaceBackups(services, workspace);
    return { backupSchedules: await stopBackupSchedule(services, workspace._id), runningBackups: stopped.backups, runningRestores: stopped.restores };
  },
  // An undeleted workspace is backed up on its schedule again.
  async resumeWork(services, workspace) {
    const schedule = (workspace.quotas as z.output<typeof WorkspaceQuotas>).backupSchedule ?? null;
    if (schedule) await syncBackupSchedule(services, workspace._id, schedule);
    return { backupSchedules: schedule ? 1 : 0 };
  },
  // A clone's quota windows, leases and retention state start at zero (usage is counted from its
  // data): their `site_state` documents, or their own collections in an archive made before it.
  clone: {
    leftBehind: [SITE_STATE_KINDS.quota, SITE_STATE_KINDS.lock],
    rewrite: (_services, collection) => (collection === SITE_STATE_COLLECTION ? withoutMeters : null),
  },
};

const METER_PREFIXES = [siteStateKindRange('quota'), siteStateKindRange('lock')].map((range) => range._id.$gte);
const withoutMeters = (doc: { _id?: unknown }) => (METER_PREFIXES.some((prefix) => String(doc._id).startsWith(prefix)) ? null : doc);
