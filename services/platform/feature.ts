import type { Feature } from '../core/feature.ts';
import { createTenant, getTenant, listTenants } from './operations.ts';

export const platformFeature: Feature = {
  name: 'platform',
  operations: [listTenants, createTenant, getTenant],
};
