import type { Feature } from '../core/feature.ts';
import { createTenant, getTenant, listTenants, quotaOperationsList } from './operations.ts';
import { operatorOperations } from './operator-operations.ts';
import { addTenantSite, deleteTenant, reactivateTenant, suspendTenant } from './tenant-lifecycle-operations.ts';

export const platformFeature: Feature = {
  name: 'platform',
  operations: [listTenants, createTenant, getTenant, addTenantSite, suspendTenant, reactivateTenant, deleteTenant, ...quotaOperationsList, ...operatorOperations],
};
