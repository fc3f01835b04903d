import type { EventPublisher, OperationContext, Services } from '../core/context.ts';
import { isSwitchOn } from '../platform/quota-guard.ts';
import { newId } from '../core/ids.ts';
import { eventCollections } from './model.ts';
import { storeDeliveries, wakeActorsFor } from './deliveries.ts';

/**
 * `ctx.emit` → the webhook deliveries: the site's active endpoints subscribed to the event each get
 * one stored delivery, and their actors are woken. Never throws into the emitting operation: the
 * rows are written before the emit returns (so the event is not lost), waking the actors happens in
 * the background and anything that goes wrong is logged and left to the drain.
 */
export function createWebhookPublisher(services: Services): EventPublisher {
  return {
    async publish(ctx: OperationContext, event: string, data: Record<string, unknown>) {
      // Webhooks switched off by the platform: no delivery is stored or sent.
      if (!isSwitchOn(ctx, 'webhooks')) return;
      try {
        const endpoints = await eventCollections(ctx.db)
          .endpoints.find({ siteId: ctx.site._id, active: true, events: event }, { projection: { _id: 1 } })
          .toArray();
        if (endpoints.length === 0) return;
        const envelope = { id: newId(), event, occurredAt: services.clock.now().toISOString(), siteId: ctx.site._id, data };
        const payload = await services.hooks.applyFilters('webhook.payload', envelope, { siteId: ctx.site._id, event });
        const body = JSON.stringify(payload);
        const where = { workspaceId: ctx.workspace._id, dbName: ctx.workspace.dbName, siteId: ctx.site._id };
        const docs = await storeDeliveries(services, where, endpoints, event, body);
        void wakeActorsFor(services, where, docs).catch((error: unknown) => {
          services.log.warn({ event, err: error instanceof Error ? error.message : String(error) }, 'webhook wake failed; left for the drain');
        });
      } catch (error) {
        services.log.error({ event, err: error instanceof Error ? error.message : String(error) }, 'webhook publish failed');
      }
    },
  };
}
