import { createHash } from 'node:crypto';
import type { Db } from 'mongodb';
import { newId } from '../core/ids.ts';
import { accessCollections } from './model.ts';

export interface AuditEntry {
  action: 'key.created' | 'key.rotated' | 'key.revoked' | 'key.updated' | 'key.deleted' | 'auth.failed' | 'login.failed';
  keyId?: string | null;
  userId?: string | null;
  ip: string;
  reason?: string | null;
}

/** Audit rows name keys by id only; no secret, hash or lookup part is ever written here. */
export async function writeAudit(db: Db, siteId: string, at: Date, entry: AuditEntry): Promise<void> {
  await accessCollections(db).audit.insertOne({
    _id: newId(at.getTime()),
    siteId,
    at,
    action: entry.action,
    keyId: entry.keyId ?? null,
    userId: entry.userId ?? null,
    ip: entry.ip,
    reason: entry.reason ?? null,
  });
}

/** Failed authentications are folded into one row per subject, reason and window of this length. */
export const FAILURE_WINDOW_MS = 10 * 60_000;

/**
 * A failed authentication (`auth.failed`, `login.failed`). A flood must not grow the log without
 * bound, even after the caller is rate limited, yet the log must still say what happened: repeats
 * of the same subject (the key id, else the user id, else the IP), action and reason within one
 * window update one row (`count`, `lastAt`) instead of adding rows. The row is found by `agg`
 * (window start + subject); its `_id` is still minted at the first failure, so rows keep sorting
 * by time. Two gateways inserting the same row at the same instant can leave two rows for that
 * window: still bounded, and no unique index is needed.
 */
export async function writeFailureAudit(db: Db, siteId: string, at: Date, entry: AuditEntry): Promise<void> {
  const windowStart = Math.floor(at.getTime() / FAILURE_WINDOW_MS) * FAILURE_WINDOW_MS;
  const subject = entry.keyId ? `key:${entry.keyId}` : entry.userId ? `user:${entry.userId}` : `ip:${entry.ip}`;
  const agg = `${windowStart}:${createHash('sha256').update(`${entry.action}|${subject}|${entry.reason ?? ''}`).digest('base64url').slice(0, 22)}`;
  await accessCollections(db).audit.updateOne(
    { siteId, agg },
    {
      $setOnInsert: { _id: newId(at.getTime()), siteId, agg, at, action: entry.action, keyId: entry.keyId ?? null, userId: entry.userId ?? null, ip: entry.ip, reason: entry.reason ?? null },
      $inc: { count: 1 },
      $set: { lastAt: at },
    },
    { upsert: true },
  );
}
