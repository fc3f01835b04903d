import type { Feature } from '../core/feature.ts';
import { cacheOperations } from './cache-ops.ts';

/** `/cache/stats` and `/cache/clear` over the registry of named caches (services/cache/caches.ts). */
export const cacheFeature: Feature = {
  name: 'cache',
  operations: cacheOperations,
};
