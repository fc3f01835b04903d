import type { Feature } from '../core/feature.ts';
import { adminEndpoints, listEvents, manageEndpoints } from './endpoint-ops.ts';
import { deliveryHistory, redeliver } from './delivery-ops.ts';
import { eventIndexes } from './model.ts';

/** Event catalog, webhook endpoints, signed durable deliveries (docs/webhooks.md). */
export const eventsFeature: Feature = {
  name: 'events',
  operations: [listEvents, ...Object.values(manageEndpoints), ...Object.values(adminEndpoints), deliveryHistory, redeliver],
  indexes: eventIndexes,
};
