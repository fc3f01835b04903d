import type { Db, Filter } from 'mongodb';
import { deleteInBatches } from '../core/bounded-delete.ts';
import { auditRows, type AuditDoc } from './model.ts';
import { PLATFORM_RETENTION_DAYS } from './rows.ts';

const DAY_MS = 24 * 60 * 60_000;

/**
 * Rows past their `expiresAt` (what the TTL index drops, and what serves this branch: of every site
 * of the database, all of them due), and change rows of the site (`siteId`, when given) older than
 * the retention as it is now.
 */
const lapsed = (now: Date, retentionDays: number, siteId?: string): Filter<AuditDoc> => ({
  $or: [{ expiresAt: { $lt: now } }, { ...(siteId ? { siteId } : {}), agg: { $exists: false }, at: { $lt: new Date(now.getTime() - retentionDays * DAY_MS) } }],
});

/**
 * One site's audit rows that are due, at most `budget`: failure rows past their window's retention,
 * change rows past the workspace's `auditRetentionDays` (a shortened retention reaches rows written
 * before it). Part of the retention pass (platform/retention.ts).
 */
export function purgeLapsedAuditRows(db: Db, siteId: string, retentionDays: number, now: Date, budget: number): Promise<number> {
  return deleteInBatches(auditRows(db), lapsed(now, retentionDays, siteId), budget);
}

/** The platform's own rows (operator actions) that are due. */
export function purgeLapsedPlatformRows(platformDb: Db, now: Date, budget: number): Promise<number> {
  return deleteInBatches(auditRows(platformDb), lapsed(now, PLATFORM_RETENTION_DAYS), budget);
}
