import type { Feature } from '../core/feature.ts';
import { siteCount } from '../core/site-count.ts';
import { adminEndpoints, listEventsOp, manageEndpoints } from './endpoint-ops.ts';
import { deliveryHistoryOp, redeliverOp } from './delivery-ops.ts';
import { stopWorkspaceWorkflow } from '../core/workflow-stop.ts';
import { endpointActorId } from '../../workflows/contracts/endpoint-actor.ts';
import { deliveryWorkflowId } from './deliveries.ts';
import { EVENT_COLLECTIONS, eventCollections, eventIndexes } from './model.ts';
import { purgeDeliveryHistory } from './retention.ts';
import { eventsClone } from './clone.ts';

/** Event catalog, webhook endpoints, signed durable deliveries (docs/webhooks.md). */
export const eventsFeature: Feature = {
  name: 'events',
  operations: [listEventsOp, ...Object.values(manageEndpoints), ...Object.values(adminEndpoints), deliveryHistoryOp, redeliverOp],
  indexes: eventIndexes,
  /**
   * Each endpoint's delivery actor, and every pending delivery: marked failed, so no drain restarts
   * it (its per-delivery workflow, of the older design, stopped too).
   */
  async stopWork(services, workspace) {
    const { deliveries: deliveryRows, endpoints } = eventCollections(services.workspaceDb(workspace));
    for await (const endpoint of endpoints.find({}, { projection: { _id: 1 } })) {
      await stopWorkspaceWorkflow(services, workspace, endpointActorId(workspace._id, endpoint._id));
    }
    let deliveries = 0;
    for await (const delivery of deliveryRows.find({ status: 'pending' }, { projection: { _id: 1 } })) {
      await stopWorkspaceWorkflow(services, workspace, deliveryWorkflowId(delivery._id));
      await deliveryRows.updateOne(
        { _id: delivery._id, status: 'pending' },
        { $set: { status: 'failed', error: 'workspace deleted', finishedAt: services.clock.now(), updatedAt: services.clock.now() } },
      );
      deliveries += 1;
    }
    return { deliveries };
  },
  async usage(services, workspace, siteId) {
    // Operator's usage pages only; endpoints are few per site (the webhookEndpoints quota bounds them).
    const webhookEndpoints = await siteCount(services.workspaceDb(workspace).collection(EVENT_COLLECTIONS.endpoints), siteId);
    return { webhookEndpoints };
  },
  retention: (ctx, run) => purgeDeliveryHistory(ctx.db, ctx.site._id, run),
  clone: eventsClone,
};
