import type { Feature } from '../core/feature.ts';
import { onConsole } from './console-operations.ts';
import { getTenant, listTenants, quotaOperationsList } from './operations.ts';
import { addTenantSite } from './site-operations.ts';
import { createTenant, deleteTenant, reactivateTenant, suspendTenant } from './lifecycle-operations.ts';

const platformOperations = [listTenants, createTenant, getTenant, addTenantSite, suspendTenant, reactivateTenant, deleteTenant, ...quotaOperationsList];

export const platformFeature: Feature = {
  name: 'platform',
  // The same operations again on the cookie session, for the operator console (console-operations.ts).
  operations: [...platformOperations, ...onConsole(platformOperations)],
};
