import type { Feature } from '../core/feature.ts';
import { adminEndpoints, listEventsOp, manageEndpoints } from './endpoint-ops.ts';
import { deliveryHistoryOp, redeliverOp } from './delivery-ops.ts';
import { eventIndexes } from './model.ts';

/** Event catalog, webhook endpoints, signed durable deliveries (docs/webhooks.md). */
export const eventsFeature: Feature = {
  name: 'events',
  operations: [listEventsOp, ...Object.values(manageEndpoints), ...Object.values(adminEndpoints), deliveryHistoryOp, redeliverOp],
  indexes: eventIndexes,
};
