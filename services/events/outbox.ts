import type { Services } from '../core/context.ts';
import { wakeActorsFor, type DeliveryTarget } from './deliveries.ts';
import { eventCollections, type DeliveryDoc, type EndpointDoc } from './model.ts';

type EndpointState = Pick<EndpointDoc, '_id' | 'siteId' | 'busyUntil' | 'pausedAt' | 'heldUntil'>;

interface Waiting {
  docs: DeliveryDoc[];
  states: readonly EndpointState[];
  done: (error?: unknown) => void;
}

interface SiteQueue {
  where: DeliveryTarget;
  waiting: Waiting[];
  flushing: boolean;
}

/**
 * Group commit of the publishers' outbox rows, per site: while one insert is in flight, the rows
 * of every other emit wait and then go in one insert, followed by one wake round (one push per
 * endpoint). Each emit still returns only once its own rows are stored. Under a burst this turns
 * twenty inserts and twenty pushes into one of each: the database pays mostly per statement.
 */
export function createOutboxWriter(services: Services) {
  const queues = new Map<string, SiteQueue>();

  async function flush(key: string, queue: SiteQueue) {
    queue.flushing = true;
    try {
      while (queue.waiting.length > 0) {
        const batch = queue.waiting.splice(0);
        const docs = batch.flatMap((w) => w.docs);
        try {
          await eventCollections(services.workspaceDb({ dbName: queue.where.dbName })).deliveries.insertMany(docs);
        } catch (error) {
          for (const w of batch) w.done(error);
          continue;
        }
        for (const w of batch) w.done();
        // The latest read of each endpoint's state (hints only: see wakeActorsFor).
        const states = [...new Map(batch.flatMap((w) => w.states).map((state) => [state._id, state])).values()];
        void wakeActorsFor(services, queue.where, docs, states).catch((error: unknown) => {
          services.log.warn({ err: error instanceof Error ? error.message : String(error) }, 'webhook wake failed; left for the drain');
        });
      }
    } finally {
      queue.flushing = false;
      if (queue.waiting.length === 0) queues.delete(key);
    }
  }

  return {
    /** Stores the rows (resolves once they are written) and wakes their actors in the background. */
    write(where: DeliveryTarget, docs: DeliveryDoc[], states: readonly EndpointState[]): Promise<void> {
      if (docs.length === 0) return Promise.resolve();
      const key = `${where.dbName}/${where.siteId}`;
      let queue = queues.get(key);
      if (!queue) {
        queue = { where, waiting: [], flushing: false };
        queues.set(key, queue);
      }
      const stored = new Promise<void>((resolve, reject) => {
        queue.waiting.push({ docs, states, done: (error) => (error === undefined ? resolve() : reject(error)) });
      });
      if (!queue.flushing) void flush(key, queue);
      return stored;
    },
  };
}

export type OutboxWriter = ReturnType<typeof createOutboxWriter>;
