import type { EventPublisher, OperationContext, Services } from '../core/context.ts';
import { isSwitchOn } from '../tenancy/quota-guard.ts';
import { newId } from '../core/ids.ts';
import { buildDeliveries } from './deliveries.ts';
import { eventReadRight } from './catalog.ts';
import { createOutbox } from './outbox.ts';

/**
 * `ctx.emit` → the webhook deliveries: the site's active endpoints subscribed to the event, whose
 * creator still holds the capability that reads it (catalog.ts, outbox.ts), each get one stored delivery, and their actors are woken. Never throws into the emitting operation: the
 * rows are written before the emit returns (so the event is not lost), waking the actors happens in
 * the background and anything that goes wrong is logged and left to the drain. Concurrent emits of
 * a site share their database statements (outbox.ts).
 */
export function createWebhookPublisher(services: Services): EventPublisher {
  const outbox = createOutbox(services);
  return {
    async publish(ctx: OperationContext, event: string, data: Record<string, unknown>) {
      // Webhooks switched off by the platform: no delivery is stored or sent.
      if (!isSwitchOn(ctx, 'webhooks')) return;
      const where = { workspaceId: ctx.workspace._id, dbName: ctx.workspace.dbName, siteId: ctx.site._id };
      try {
        const requires = await eventReadRight(services, ctx.site._id, event);
        await outbox.publish(where, event, requires, async (endpoints) => {
          if (endpoints.length === 0) return [];
          const envelope = { id: newId(), event, occurredAt: services.clock.now().toISOString(), siteId: ctx.site._id, data };
          const payload = await services.hooks.applyFilters('webhook.payload', envelope, { siteId: ctx.site._id, event });
          return buildDeliveries(services, where, endpoints, event, JSON.stringify(payload));
        });
      } catch (error) {
        services.log.error({ event, err: error instanceof Error ? error.message : String(error) }, 'webhook publish failed');
      }
    },
  };
}
