import type { Db } from 'mongodb';
import type { RetentionResult, RetentionRun } from '../core/feature.ts';
import { deleteInBatches } from '../core/bounded-delete.ts';
import { idAt } from '../core/ids.ts';
import { eventCollections } from './model.ts';

const DAY_MS = 24 * 60 * 60_000;

/**
 * Delivery history past `deliveryHistoryDays` (docs/platform.md, "Retention"), at most `budget` of
 * each kind per site and pass:
 * - deliveries finished before the cutoff (`{siteId, finishedAt}`; a pending delivery has no
 *   `finishedAt`, so it is never matched, however old);
 * - attempt rows and attempt batch documents made before it, by their time-ordered `_id` (the
 *   history's own `{siteId, _id}` indexes, `idAt`): a delivery's attempts are made before it
 *   finishes, so they go no later than it. A batch document (one actor batch's attempts) counts
 *   as one under `attempts`: the budget bounds documents removed.
 */
export async function purgeDeliveryHistory(db: Db, siteId: string, run: RetentionRun): Promise<RetentionResult> {
  const days = run.rules.deliveryHistoryDays;
  if (days === null) return { removed: {} };
  const cutoff = new Date(run.now.getTime() - days * DAY_MS);
  const { deliveries, attempts, attemptBatches } = eventCollections(db);
  const before = { $lt: idAt(cutoff) };
  const [deliveryRows, attemptRows, batchRows] = await Promise.all([
    deleteInBatches(deliveries, { siteId, finishedAt: { $lt: cutoff } }, run.budget),
    deleteInBatches(attempts, { siteId, _id: before }, run.budget),
    deleteInBatches(attemptBatches, { siteId, _id: before }, run.budget),
  ]);
  return { removed: { deliveries: deliveryRows, attempts: attemptRows + batchRows } };
}
