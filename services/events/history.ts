import type { Db } from 'mongodb';
import { newId } from '../core/ids.ts';
import { eventCollections, type AttemptBatchDoc, type AttemptDoc, type BatchAttempt } from './model.ts';
import { isDuplicateKey } from '../core/mongo-errors.ts';

/**
 * The delivery history (contract 6.2.6) in two shapes, read as one list of attempts:
 * - `webhook_attempt_batches`: one document per batch an actor sent, its attempts inside. The
 *   local engine charges per document written far more than per byte (an attempt row with its
 *   unique key cost ~0.5 ms, an attempt inside a batch document ~0.03 ms), so this is how the
 *   actors record what they sent.
 * - `webhook_attempts`: one document per attempt. Entries written one at a time stay there (an
 *   `interrupted` attempt, the breaker's `paused` entry, both upserts on the unique
 *   (delivery, attempt) key) along with every row written before the batch documents.
 */

/** Records one batch's attempts; `batch` is the id the endpoint's `inflight` named while it was sent. */
export async function recordBatch(
  db: Db,
  entry: { siteId: string; endpointId: string; batch: string; unsent?: string[]; attempts: Omit<BatchAttempt, 'id'>[] },
): Promise<void> {
  if (entry.attempts.length === 0 && !entry.unsent?.length) return;
  // Ids are taken in one go and the document's own id after them, so that ordering the documents
  // by `_id` orders their attempts too (the history reads the newest documents only).
  const attempts = entry.attempts.map((attempt) => ({ id: newId(), ...attempt }));
  const doc: AttemptBatchDoc = { _id: newId(), ...entry, attempts };
  try {
    await eventCollections(db).attemptBatches.insertOne(doc);
  } catch (error) {
    // The batch was recorded already (a retried pass settling what a dead one sent).
    if (!isDuplicateKey(error)) throw error;
  }
}

/** The batch a pass recorded under this id, if it got that far (a retried pass asks after a crash). */
export function findBatch(db: Db, siteId: string, batch: string): Promise<AttemptBatchDoc | null> {
  // Exactly the unique index's keys: the one query shape the local engine answers by index.
  return eventCollections(db).attemptBatches.findOne({ siteId, batch });
}

const flatten = (doc: AttemptBatchDoc): AttemptDoc[] =>
  doc.attempts.map(({ id, final: _final, ...attempt }) => ({ _id: id, siteId: doc.siteId, endpointId: doc.endpointId, ...attempt }));

/** The newest `limit` attempts of a site (optionally one endpoint), newest first, from both shapes. */
export async function latestAttempts(db: Db, siteId: string, limit: number, endpointId?: string): Promise<AttemptDoc[]> {
  const { attempts, attemptBatches } = eventCollections(db);
  const filter = { siteId, ...(endpointId ? { endpointId } : {}) };
  // Every batch holds at least one attempt, so the newest `limit` batches hold the newest `limit`
  // batched attempts.
  const [rows, batches] = await Promise.all([
    attempts.find(filter).sort({ _id: -1 }).limit(limit).toArray(),
    attemptBatches.find(filter).sort({ _id: -1 }).limit(limit).toArray(),
  ]);
  return [...rows, ...batches.flatMap(flatten)].sort((a, b) => (a._id < b._id ? 1 : -1)).slice(0, limit);
}

/** Every attempt of some deliveries, in attempt order, from both shapes (a scan of the batches on the local engine). */
export async function attemptsOf(db: Db, siteId: string, deliveryIds: string[]): Promise<AttemptDoc[]> {
  const { attempts, attemptBatches } = eventCollections(db);
  const wanted = new Set(deliveryIds);
  const [rows, batches] = await Promise.all([
    attempts.find({ siteId, deliveryId: { $in: deliveryIds } }).toArray(),
    attemptBatches.find({ siteId, 'attempts.deliveryId': { $in: deliveryIds } }).toArray(),
  ]);
  const batched = batches.flatMap(flatten).filter((attempt) => wanted.has(attempt.deliveryId));
  return [...rows, ...batched].sort((a, b) => a.attempt - b.attempt || (a._id < b._id ? -1 : 1));
}

/** Every attempt made to an endpoint, oldest first, from both shapes (tests and the bench). */
export async function attemptsTo(db: Db, siteId: string, endpointIds: string[]): Promise<AttemptDoc[]> {
  const { attempts, attemptBatches } = eventCollections(db);
  const filter = { siteId, endpointId: { $in: endpointIds } };
  const [rows, batches] = await Promise.all([attempts.find(filter).toArray(), attemptBatches.find(filter).toArray()]);
  return [...rows, ...batches.flatMap(flatten)].sort((a, b) => (a._id < b._id ? -1 : 1));
}
