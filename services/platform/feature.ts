import type { Feature } from '../core/feature.ts';
import { createTenant, getTenant, quotaOperationsList } from './operations.ts';
import { listTenants } from './tenant-list-operation.ts';
import { usageOperations } from './usage-operations.ts';
import { operatorOperations } from './operator-operations.ts';
import { addTenantSite, deleteTenant, reactivateTenant, suspendTenant } from './tenant-lifecycle-operations.ts';

export const platformFeature: Feature = {
  name: 'platform',
  operations: [listTenants, createTenant, getTenant, addTenantSite, suspendTenant, reactivateTenant, deleteTenant, ...quotaOperationsList, ...usageOperations, ...operatorOperations],
};
