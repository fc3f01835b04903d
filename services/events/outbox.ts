import type { Services } from '../core/context.ts';
import type { Capability } from '../core/capabilities.ts';
import { createFeedCache } from '../core/feed-cache.ts';
import { topics } from '../core/topics.ts';
import { wakeActorsFor, type DeliveryTarget } from './deliveries.ts';
import { creatorOf, liveGrantsAmong, loadCreatorRights, mayRead, type CreatorRights } from './creator-rights.ts';
import { eventCollections, type DeliveryDoc, type EndpointDoc } from './model.ts';

/** What a publisher needs of an endpoint: where it subscribes, who made it, and hints for the wake. */
export type SubscribedEndpoint = Pick<EndpointDoc, '_id' | 'siteId' | 'events' | 'busyUntil' | 'pausedAt' | 'heldUntil' | 'ownerKeyId' | 'createdBy'>;

/** A site's active endpoints and what each creator may read, held and dropped together. */
interface Subscriptions {
  endpoints: SubscribedEndpoint[];
  rights: Map<string, CreatorRights>;
}

/** Sites whose active endpoints a process holds at most (least recently used dropped first). */
const CACHED_SITES = 10_000;

interface Waiting {
  event: string;
  /** The capability that reads the event's data (catalog.ts): an endpoint's creator must hold it. */
  requires: Capability;
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
 * then they all go in the next round: one insert of all rows, then (in the background) one wake
 * round (one push per endpoint). Each emit returns once its own rows are stored. Under a burst this
 * turns twenty inserts and pushes into one of each: the local engine pays per statement and per
 * document, and a statement waits for every other write of the engine (bench/RESULTS.md).
 *
 * The site's active endpoints are held in the process while the change feed vouches for them
 * (`services.changeFeed.trusted()`, a gateway): saving, switching or deleting an endpoint publishes
 * the topic `webhook-endpoints:<siteId>` and returns only once every trusted process dropped them
 * (endpoints.ts), so an endpoint saved before an emit always gets that event, as when each round
 * read them. A process without a trusted feed (the worker, a gateway whose feed is down) reads them
 * once per round, after every emit the round serves.
 *
 * An endpoint gets an event only while its creator (the key, grant or user that made it) still
 * holds the capability that reads the event's data. Those rights are held with the endpoints and
 * dropped with them by any access change of the site (`site-access:<siteId>`: a key revoked or
 * narrowed, a user or role changed or deleted), so the check costs no statement per emit; only an
 * OAuth grant's revocation, which is not announced, is read per round (for endpoints a grant made).
 */
export function createOutbox(services: Services) {
  const queues = new Map<string, SiteQueue>();
  const subscriptions = createFeedCache<Subscriptions>(services.changeFeed, CACHED_SITES);

  /** The site's active endpoints; `fresh` when read now (then their states are hints for the wake). */
  async function activeEndpoints(where: DeliveryTarget): Promise<Subscriptions & { fresh: boolean }> {
    let fresh = false;
    const db = services.workspaceDb({ dbName: where.dbName });
    const load = async (): Promise<Subscriptions> => {
      fresh = true;
      const endpoints = await eventCollections(db)
        .endpoints.find(
          { siteId: where.siteId, active: true },
          { projection: { _id: 1, siteId: 1, events: 1, busyUntil: 1, pausedAt: 1, heldUntil: 1, ownerKeyId: 1, createdBy: 1 } },
        )
        .toArray();
      return { endpoints, rights: await loadCreatorRights(db, where.siteId, endpoints) };
    };
    const held = await subscriptions.read(`${where.dbName}/${where.siteId}`, load, () => [
      topics.webhookEndpoints(where.siteId),
      topics.siteAccess(where.siteId),
    ]);
    return { ...held, fresh };
  }

  /** Per event of the round, the endpoints subscribed to it whose creator may still read it. */
  async function recipients(where: DeliveryTarget, batch: Waiting[], { endpoints, rights }: Subscriptions) {
    const events = new Set(batch.map((w) => w.event));
    const subscribed = endpoints.filter((e) => e.events.some((event) => events.has(event)));
    const grants = [...new Set(subscribed.map((e) => rights.get(creatorOf(e))?.grantId).filter((id): id is string => !!id))];
    const liveGrants = await liveGrantsAmong(services.workspaceDb({ dbName: where.dbName }), where.siteId, grants);
    const now = services.clock.now().getTime();
    const receives = (e: SubscribedEndpoint, w: Waiting) => e.events.includes(w.event) && mayRead(rights.get(creatorOf(e)), w.requires, now, liveGrants);
    return { subscribed, forEach: batch.map((w) => subscribed.filter((e) => receives(e, w))) };
  }

  async function round(queue: SiteQueue, batch: Waiting[]) {
    const { deliveries } = eventCollections(services.workspaceDb({ dbName: queue.where.dbName }));
    const held = await activeEndpoints(queue.where);
    const { subscribed, forEach } = await recipients(queue.where, batch, held);
    const built = await Promise.allSettled(batch.map((w, i) => w.build(forEach[i])));
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
    // A state held in the cache is stale (busy, held, paused change all the time): read again then.
    const known = held.fresh ? subscribed.filter((e) => docs.some((d) => d.endpointId === e._id)) : undefined;
    void wakeActorsFor(services, queue.where, docs, known).catch((error: unknown) => {
      services.log.warn({ err: error instanceof Error ? error.message : String(error) }, 'webhook wake failed; left for the drain');
    });
  }

  async function flush(key: string, queue: SiteQueue) {
    queue.flushing = true;
    try {
      while (queue.waiting.length > 0) {
        // The emitters the last round released come back within this turn of the event loop: let
        // them join this round rather than send one alone and the rest in the round after.
        await new Promise((resolve) => setImmediate(resolve));
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
    publish(where: DeliveryTarget, event: string, requires: Capability, build: Waiting['build']): Promise<void> {
      const key = `${where.dbName}/${where.siteId}`;
      let queue = queues.get(key);
      if (!queue) {
        queue = { where, waiting: [], flushing: false };
        queues.set(key, queue);
      }
      const stored = new Promise<void>((resolve, reject) => {
        queue.waiting.push({ event, requires, build, done: (error) => (error === undefined ? resolve() : reject(error)) });
      });
      if (!queue.flushing) void flush(key, queue);
      return stored;
    },
  };
}
