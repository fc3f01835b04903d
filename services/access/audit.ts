import { createHash } from 'node:crypto';
import type { Db } from 'mongodb';
import { newId } from '../core/ids.ts';
import { accessCollections } from './model.ts';
import { counterId, raiseCounter } from './rate-limit.ts';

/** A failed authentication; changes (keys included) are the runner's rows (services/audit/). */
export interface AuditEntry {
  action: 'auth.failed' | 'login.failed';
  keyId?: string | null;
  userId?: string | null;
  ip: string;
  reason?: string | null;
}

/** Failed authentications are folded into one row per subject, reason and window of this length. */
export const FAILURE_WINDOW_MS = 10 * 60_000;
/** Failure rows are kept this long after their window, then dropped (TTL index, and `purgeExpiredAccessRows`). */
export const FAILURE_RETENTION_MS = 30 * 24 * 60 * 60_000;
/** Distinct rows anonymous callers (subject: an address) may add to a site's log per window. */
export const ANONYMOUS_ROWS_PER_WINDOW = 200;
/** The row holding every anonymous failure past that many addresses in a window. */
export const OVERFLOW_IP = '*';

const digest = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 22);

/**
 * A failed authentication (`auth.failed`, `login.failed`). A flood must not grow the log without
 * bound, even after the caller is rate limited, yet the log must still say what happened: repeats
 * of the same subject (the key id, else the user id, else the IP), action and reason within one
 * window update one row (`count`, `lastAt`) instead of adding rows. The row is found by `agg`
 * (window start + subject); its `_id` is still minted at the first failure, so rows keep sorting
 * by time. Addresses are the caller's to choose (an IPv6 client has billions), so an address
 * gets a row of its own only while the site's window has fewer than `ANONYMOUS_ROWS_PER_WINDOW`
 * of them (a counter in `rate_counters` hands out the places); later ones are counted in the
 * window's overflow row (`ip: "*"`, reason `overflow`). Keys and users are the site's own, so
 * their rows are not capped. Every failure row expires `FAILURE_RETENTION_MS` after its window.
 * Two gateways inserting the same row at the same instant can leave two rows for that window:
 * still bounded, and no unique index is needed.
 */
export async function writeFailureAudit(db: Db, siteId: string, at: Date, entry: AuditEntry): Promise<void> {
  const { audit } = accessCollections(db);
  const windowStart = Math.floor(at.getTime() / FAILURE_WINDOW_MS) * FAILURE_WINDOW_MS;
  const anonymous = !entry.keyId && !entry.userId;
  const subject = entry.keyId ? `key:${entry.keyId}` : entry.userId ? `user:${entry.userId}` : `ip:${entry.ip}`;
  const agg = `${windowStart}:${digest(`${entry.action}|${subject}|${entry.reason ?? ''}`)}`;
  const repeat = { $inc: { count: 1 }, $set: { lastAt: at } };
  let row = { agg, ip: entry.ip, reason: entry.reason ?? null };
  if (anonymous) {
    if ((await audit.updateOne({ siteId, agg }, repeat)).matchedCount > 0) return;
    const place = await raiseCounter(db, counterId(siteId, 'audit-rows', windowStart), 1, siteId, new Date(windowStart + FAILURE_WINDOW_MS));
    if (place > ANONYMOUS_ROWS_PER_WINDOW) row = { agg: `${windowStart}:${digest(`${entry.action}|overflow`)}`, ip: OVERFLOW_IP, reason: 'overflow' };
  }
  await audit.updateOne(
    { siteId, agg: row.agg },
    {
      $setOnInsert: {
        _id: newId(at.getTime()),
        siteId,
        agg: row.agg,
        at,
        action: entry.action,
        keyId: entry.keyId ?? null,
        userId: entry.userId ?? null,
        ip: row.ip,
        reason: row.reason,
        expiresAt: new Date(windowStart + FAILURE_WINDOW_MS + FAILURE_RETENTION_MS),
      },
      ...repeat,
    },
    { upsert: true },
  );
}
