import type { Services } from '../core/context.ts';
import { wakeActorsFor, type DeliveryTarget } from './deliveries.ts';
import { eventCollections, type DeliveryDoc, type EndpointDoc } from './model.ts';

/** What a publisher needs of an endpoint: where it subscribes, and hints for the wake. */
export type SubscribedEndpoint = Pick<EndpointDoc, '_id' | 'siteId' | 'events' | 'busyUntil' | 'pausedAt' | 'heldUntil'>;

interface Waiting {
  event: string;
  /** The event's rows for its subscribed endpoints (none: nothing to store). */
  build(endpoints: SubscribedEndpoint[]): Promise<DeliveryDoc[]>;
  done(error?: unknown): void;
}

interface SiteQueue {
  where: DeliveryTarget;
  waiting: Waiting[];
  flushing: boolean;
}

/**
 * Group commit of the publishers, per site: while one round is in flight, every other emit waits,
 * then they all go in the next round: one read of the subscribed endpoints (started after each of
 * them was emitted, so an endpoint saved before the emit is never missed), one insert of all rows,
 * one wake round (one push per endpoint). Each emit returns once its own rows are stored. Under a
 * burst this turns twenty reads, inserts and pushes into one of each: the local engine pays mostly
 * per statement.
 */
export function createOutbox(services: Services) {
  const queues = new Map<string, SiteQueue>();

  async function round(queue: SiteQueue, batch: Waiting[]) {
    const { endpoints, deliveries } = eventCollections(services.workspaceDb({ dbName: queue.where.dbName }));
    const subscribed = await endpoints
      .find(
        { siteId: queue.where.siteId, active: true, events: { $in: [...new Set(batch.map((w) => w.event))] } },
        { projection: { _id: 1, siteId: 1, events: 1, busyUntil: 1, pausedAt: 1, heldUntil: 1 } },
      )
      .toArray();
    const built = await Promise.allSettled(batch.map((w) => w.build(subscribed.filter((e) => e.events.includes(w.event)))));
    const stored: Waiting[] = [];
    const docs: DeliveryDoc[] = [];
    built.forEach((result, i) => {
      if (result.status === 'rejected') return batch[i].done(result.reason);
      stored.push(batch[i]);
      docs.push(...result.value);
    });
    if (docs.length) await deliveries.insertMany(docs);
    for (const w of stored) w.done();
    if (docs.length === 0) return;
    void wakeActorsFor(services, queue.where, docs, subscribed.filter((e) => docs.some((d) => d.endpointId === e._id))).catch((error: unknown) => {
      services.log.warn({ err: error instanceof Error ? error.message : String(error) }, 'webhook wake failed; left for the drain');
    });
  }

  async function flush(key: string, queue: SiteQueue) {
    queue.flushing = true;
    try {
      while (queue.waiting.length > 0) {
        const batch = queue.waiting.splice(0);
        await round(queue, batch).catch((error: unknown) => {
          for (const w of batch) w.done(error);
        });
      }
    } finally {
      queue.flushing = false;
      if (queue.waiting.length === 0) queues.delete(key);
    }
  }

  return {
    /** Stores the event's rows (resolves once written) and wakes their actors in the background. */
    publish(where: DeliveryTarget, event: string, build: Waiting['build']): Promise<void> {
      const key = `${where.dbName}/${where.siteId}`;
      let queue = queues.get(key);
      if (!queue) {
        queue = { where, waiting: [], flushing: false };
        queues.set(key, queue);
      }
      const stored = new Promise<void>((resolve, reject) => {
        queue.waiting.push({ event, build, done: (error) => (error === undefined ? resolve() : reject(error)) });
      });
      if (!queue.flushing) void flush(key, queue);
      return stored;
    },
  };
}
