import type { Db } from 'mongodb';
import type { IndexSpec } from '../tenancy/indexes.ts';

/** Workspace collections of the events feature. Every document carries `siteId`. */
export const EVENT_COLLECTIONS = {
  endpoints: 'webhook_endpoints',
  deliveries: 'webhook_deliveries',
  attempts: 'webhook_attempts',
  attemptBatches: 'webhook_attempt_batches',
} as const;

export interface EndpointDoc {
  _id: string;
  siteId: string;
  name: string;
  url: string;
  events: string[];
  active: boolean;
  /** The signing secret, AES-256-GCM encrypted (secrets.ts); needed in clear only to sign. */
  secretEnc: string;
  /** Key that registered the endpoint (contract 5.11); null when an administrator did. */
  ownerKeyId: string | null;
  createdBy: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** Attempts in flight at once to this endpoint (1–32); absent: the default. */
  concurrency?: number;
  /** Attempts started per second at most; absent or null: no limit. */
  maxPerSecond?: number | null;
  /** Circuit breaker: since when every attempt has failed (null after any success). */
  failingSince?: Date | null;
  /** Set when the breaker paused the endpoint; nothing is sent until it is resumed. */
  pausedAt?: Date | null;
  pauseReason?: string | null;
  /** Its actor is in a delivery pass until then: publishers push to `inbox` instead of waking it. */
  busyUntil?: Date | null;
  /**
   * The actor's last batch failed entirely: it sends nothing more until then (its timer is set for
   * it), and publishers neither push nor wake; the pass at that time finds the rows by its scan.
   */
  heldUntil?: Date | null;
  /** Ids of deliveries stored while the actor was busy; the pass takes them (no scan needed). */
  inbox?: string[];
  /** The batch the actor is sending (delivery id, attempt): a retried pass finds what was cut off. */
  inflight?: Array<{ id: string; attempt: number }>;
  /**
   * The id under which that batch's history is recorded (`AttemptBatchDoc.batch`): a retried pass
   * that finds it recorded writes the outcomes from it instead of sending those deliveries again.
   */
  inflightBatch?: string | null;
}

/** pending: not final yet (its workflow runs, or the drain will start it); delivered / failed: final. */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface DeliveryDoc {
  _id: string;
  siteId: string;
  endpointId: string;
  event: string;
  /** The exact JSON body sent on every attempt (after the `webhook.payload` filter). */
  body: string;
  status: DeliveryStatus;
  attempts: number;
  responseCode: number | null;
  error: string | null;
  redeliveryOf: string | null;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
  /**
   * `endpoint`: delivered by the endpoint's actor. Absent: stored by the retired per-delivery
   * design; the drain hands it to the actor once its old run is not open (legacy-deliveries.ts).
   */
  via?: 'endpoint';
  /** When the actor may attempt it next (stored: at once; failed: after the backoff). */
  nextAttemptAt?: Date;
  /**
   * Set by the actors before the endpoint's `inflight` batch record (a pass of that version died
   * before writing the outcome): the next pass records that attempt as interrupted. Now always false.
   */
  claimed?: boolean;
}

/** `paused` is not an attempt: the breaker's entry (attempt 0 of the delivery that tripped it). */
export type AttemptStatus = 'succeeded' | 'failed' | 'timeout' | 'blocked' | 'interrupted' | 'paused';

/** One row per attempt (contract 6.2.6): how entries written one at a time are stored, and how every attempt is read (history.ts). */
export interface AttemptDoc {
  _id: string;
  siteId: string;
  deliveryId: string;
  endpointId: string;
  event: string;
  attempt: number;
  status: AttemptStatus;
  responseCode: number | null;
  error: string | null;
  /** null for an `interrupted` attempt: its worker died before anything was written. */
  startedAt: Date | null;
  finishedAt: Date | null;
  durationMs: number | null;
}

/** One attempt inside a batch document: an `AttemptDoc` less what the batch holds once. */
export type BatchAttempt = Omit<AttemptDoc, '_id' | 'siteId' | 'endpointId'> & {
  id: string;
  /** Final without retry (a refused target, a gone endpoint); set only then. Not part of the view. */
  final?: true;
};

/** The attempts of one batch an actor sent, in one document (history.ts). */
export interface AttemptBatchDoc {
  _id: string;
  siteId: string;
  endpointId: string;
  /** The id the endpoint's `inflightBatch` named while the batch was sent (unique per site). */
  batch: string;
  /** Deliveries the batch took but did not send (it stopped early): a retried pass does not count them as interrupted. */
  unsent?: string[];
  attempts: BatchAttempt[];
}

export function eventCollections(db: Db) {
  return {
    endpoints: db.collection<EndpointDoc>(EVENT_COLLECTIONS.endpoints),
    deliveries: db.collection<DeliveryDoc>(EVENT_COLLECTIONS.deliveries),
    attempts: db.collection<AttemptDoc>(EVENT_COLLECTIONS.attempts),
    attemptBatches: db.collection<AttemptBatchDoc>(EVENT_COLLECTIONS.attemptBatches),
  };
}

export const eventIndexes: IndexSpec[] = [
  // Endpoints are a `site_config` kind (core/site-config.ts): a site's endpoints, its active ones (read
  // once per change of them, held by the outbox's feed cache) and a key's own are that kind's few hand-made rows of the site.
  // The pending deliveries of a site (the drain), of one endpoint (its actor).
  { collection: EVENT_COLLECTIONS.deliveries, keys: { siteId: 1, status: 1, via: 1, endpointId: 1 } },
  // Retention: finished deliveries past the history's days (events/retention.ts).
  { collection: EVENT_COLLECTIONS.deliveries, keys: { siteId: 1, finishedAt: 1 } },
  // Single attempt rows (interrupted, paused; the older history): one per delivery and attempt, upserted.
  { collection: EVENT_COLLECTIONS.attempts, keys: { siteId: 1, deliveryId: 1, attempt: 1 }, options: { unique: true } },
  // History: newest first, of the site or of one endpoint.
  { collection: EVENT_COLLECTIONS.attempts, keys: { siteId: 1, _id: -1 } },
  { collection: EVENT_COLLECTIONS.attempts, keys: { siteId: 1, endpointId: 1, _id: -1 } },
  { collection: EVENT_COLLECTIONS.attemptBatches, keys: { siteId: 1, batch: 1 }, options: { unique: true } },
  { collection: EVENT_COLLECTIONS.attemptBatches, keys: { siteId: 1, _id: -1 } },
  { collection: EVENT_COLLECTIONS.attemptBatches, keys: { siteId: 1, endpointId: 1, _id: -1 } },
  { collection: EVENT_COLLECTIONS.attemptBatches, keys: { siteId: 1, 'attempts.deliveryId': 1 } },
];
