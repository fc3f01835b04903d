import type { Db } from 'mongodb';
import { accessCollections } from './model.ts';

export interface WindowResult {
  name: string;
  limit: number;
  count: number;
  /** Seconds until the window resets (at least 1). */
  resetSeconds: number;
}

const WINDOW_MS = 60_000;

/**
 * Fixed one-minute window counters shared by every gateway: one document per bucket and minute,
 * `$inc` with upsert, one round trip per hit. Two concurrent first hits can race on the upsert;
 * the loser retries once and then finds the document.
 */
export async function hitWindow(db: Db, siteId: string, name: string, bucket: string, limit: number, now: Date, windowMs = WINDOW_MS): Promise<WindowResult> {
  const start = Math.floor(now.getTime() / windowMs) * windowMs;
  const id = `${siteId}:${bucket}:${start}`;
  const counters = accessCollections(db).counters;
  const run = () =>
    counters.findOneAndUpdate(
      { _id: id },
      { $inc: { n: 1 }, $setOnInsert: { siteId, expiresAt: new Date(start + windowMs) } },
      { upsert: true, returnDocument: 'after', projection: { n: 1 } },
    );
  let doc;
  try {
    doc = await run();
  } catch (error) {
    if ((error as { code?: number }).code !== 11000) throw error;
    doc = await run();
  }
  return { name, limit, count: doc?.n ?? 1, resetSeconds: Math.max(1, Math.ceil((start + windowMs - now.getTime()) / 1000)) };
}

export const exceeded = (result: WindowResult) => result.count > result.limit;

/**
 * IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers-09): one list item per
 * policy, `r` = remaining, `t` = seconds to reset; the policies in `RateLimit-Policy`.
 */
export function rateLimitHeaders(results: readonly WindowResult[]): Record<string, string> {
  return {
    ratelimit: results.map((r) => `"${r.name}";r=${Math.max(0, r.limit - r.count)};t=${r.resetSeconds}`).join(', '),
    'ratelimit-policy': results.map((r) => `"${r.name}";q=${r.limit};w=60`).join(', '),
  };
}

/** Old windows are dropped now and then (the local engine has no TTL indexes). */
export async function purgeOldWindows(db: Db, siteId: string, now: Date): Promise<void> {
  await accessCollections(db).counters.deleteMany({ siteId, expiresAt: { $lt: now } });
}
