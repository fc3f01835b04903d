import type { Feature } from '../core/feature.ts';
import { onConsole } from './console-operations.ts';
import { getTenant, quotaOperationsList } from './operations.ts';
import { listTenants } from './tenant-list-operation.ts';
import { usageOperations } from './usage-operations.ts';
import { operatorOperations } from './operator-operations.ts';
import { addTenantSite } from './site-operations.ts';
import { createTenant, deleteTenant, reactivateTenant, suspendTenant } from './lifecycle-operations.ts';

const platformOperations = [listTenants, createTenant, getTenant, addTenantSite, suspendTenant, reactivateTenant, deleteTenant, ...quotaOperationsList, ...usageOperations];

export const platformFeature: Feature = {
  name: 'platform',
  // The same operations again on the cookie session, for the operator console (console-operations.ts).
  // Managing operators stays on the API (keys with platform:manage), not in the console.
  operations: [...platformOperations, ...operatorOperations, ...onConsole(platformOperations)],
};
