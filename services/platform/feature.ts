import type { Feature } from '../core/feature.ts';
import { onConsole } from './console-ops.ts';
import { getTenantOp, quotaOperationsList } from './tenant-ops.ts';
import { listTenantsOp } from './tenant-list-ops.ts';
import { usageOperations } from './usage-ops.ts';
import { operatorOperations } from './operator-ops.ts';
import { addTenantSiteOp } from './site-ops.ts';
import { healthOperations } from './health.ts';
import { backupOperations } from './backup/backup-ops.ts';
import { placementOperations } from './placement/placement-ops.ts';
import { stopBackupSchedule } from './backup/schedule.ts';
import { createTenantOp, deleteTenantOp, reactivateTenant, suspendTenant } from './lifecycle-ops.ts';

const platformOperations = [
  listTenantsOp,
  createTenantOp,
  getTenantOp,
  addTenantSiteOp,
  suspendTenant,
  reactivateTenant,
  deleteTenantOp,
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
  // A deleted workspace is no longer backed up on schedule.
  async stopWork(services, workspace) {
    return { backupSchedules: await stopBackupSchedule(services, workspace._id) };
  },
};
