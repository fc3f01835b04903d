import type { Feature } from '../core/feature.ts';
import { getTenant, listTenants, quotaOperationsList } from './operations.ts';
import { addTenantSite } from './site-operations.ts';
import { createTenant, deleteTenant, reactivateTenant, suspendTenant } from './lifecycle-operations.ts';

export const platformFeature: Feature = {
  name: 'platform',
  operations: [listTenants, createTenant, getTenant, addTenantSite, suspendTenant, reactivateTenant, deleteTenant, ...quotaOperationsList],
};
