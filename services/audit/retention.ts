import type { Collection, Db, Filter } from 'mongodb';
import { auditRows, type AuditDoc } from './model.ts';
import { DEFAULT_RETENTION_DAYS, PLATFORM_RETENTION_DAYS } from './rows.ts';

/** A pass drops at most this many rows per collection (batches of `BATCH`); the rest goes next pass. */
const BATCH = 500;
const MAX_BATCHES = 20;
const DAY_MS = 24 * 60 * 60_000;

async function dropInBatches(collection: Collection<AuditDoc>, filter: Filter<AuditDoc>): Promise<number> {
  let dropped = 0;
  for (let round = 0; round < MAX_BATCHES; round += 1) {
    const ids = (
      await collection
        .find(filter, { projection: { _id: 1 } })
        .limit(BATCH)
        .toArray()
    ).map((row) => row._id);
    if (ids.length === 0) break;
    dropped += (await collection.deleteMany({ _id: { $in: ids } })).deletedCount;
    if (ids.length < BATCH) break;
  }
  return dropped;
}

/** Rows past their `expiresAt` (what a TTL index drops), and change rows older than the retention as it is now. */
const lapsed = (now: Date, retentionDays: number): Filter<AuditDoc> => ({
  $or: [{ expiresAt: { $lt: now } }, { agg: { $exists: false }, at: { $lt: new Date(now.getTime() - retentionDays * DAY_MS) } }],
});

/**
 * One site's audit rows that are due: failure rows past their window's retention, change rows past
 * the workspace's `auditRetentionDays` (a shortened retention reaches rows written before it).
 */
export function purgeLapsedAuditRows(db: Db, siteId: string, retentionDays: number | undefined, now: Date): Promise<number> {
  return dropInBatches(auditRows(db), { siteId, ...lapsed(now, retentionDays ?? DEFAULT_RETENTION_DAYS) });
}

/** The platform's own rows (operator actions) that are due. */
export function purgeLapsedPlatformRows(platformDb: Db, now: Date): Promise<number> {
  return dropInBatches(auditRows(platformDb), lapsed(now, PLATFORM_RETENTION_DAYS));
}
