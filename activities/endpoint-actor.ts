import { Context } from '@temporalio/activity';
import type { Services } from '../services/core/context.ts';
import { runDeliveryPass } from '../services/events/pass.ts';
import type { DeliveryPassResult, EndpointRef } from '../workflows/contracts/endpoint-actor.ts';

export function createEndpointActorActivities(services: Services) {
  return {
    /**
     * One delivery pass of an endpoint's actor (services/events/pass.ts). It heartbeats all
     * along, so a worker killed mid-pass is noticed after the heartbeat timeout and the pass runs
     * again elsewhere; it stops claiming when the worker shuts down.
     */
    async deliverPending(ref: EndpointRef): Promise<DeliveryPassResult> {
      const activity = Context.current();
      const every = Math.max(200, Math.min(1000, services.webhooks.heartbeatTimeoutMs / 3));
      const beat = setInterval(() => activity.heartbeat(), every);
      try {
        return await runDeliveryPass(services, ref, {
          heartbeat: () => activity.heartbeat(),
          stopping: () => activity.cancellationSignal.aborted,
        });
      } finally {
        clearInterval(beat);
      }
    },
  };
}

export type EndpointActorActivities = ReturnType<typeof createEndpointActorActivities>;
