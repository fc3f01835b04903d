import type { Db } from 'mongodb';
import { accessCollections } from './model.ts';
import { createKeyedBatcher } from '../core/batching.ts';

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
 * `$inc` with upsert. Hits that arrive at one gateway while that bucket's `$inc` is in flight are
 * folded into the next one (`$inc` by the batch size; each hit gets its own position in the
 * count), so the count stays exact across gateways while a busy key costs far fewer round trips.
 */
export function createWindowCounter(db: Db) {
  const batched = createKeyedBatcher<null, number>(async (lane, items) => {
    const [id, siteId, expiresAt] = JSON.parse(lane) as [string, string, number];
    const after = await raiseCounter(db, id, items.length, siteId, new Date(expiresAt));
    return items.map((_, index) => after - items.length + index + 1);
  });

  return async function hit(siteId: string, name: string, bucket: string, limit: number, now: Date, windowMs = WINDOW_MS): Promise<WindowResult> {
    const start = Math.floor(now.getTime() / windowMs) * windowMs;
    const count = await batched(JSON.stringify([counterId(siteId, bucket, start), siteId, start + windowMs]), null);
    return { name, limit, count, resetSeconds: Math.max(1, Math.ceil((start + windowMs - now.getTime()) / 1000)) };
  };
}

/** A bucket's counter document for the window starting at `start`. */
export const counterId = (siteId: string, bucket: string, start: number) => `${siteId}:${bucket}:${start}`;

/**
 * Raises a counter document by `by` and answers its total after the raise. Two first raises on
 * different gateways can race on the upsert; the loser retries once.
 */
export async function raiseCounter(db: Db, id: string, by: number, siteId: string, expiresAt: Date): Promise<number> {
  const run = () =>
    accessCollections(db).counters.findOneAndUpdate(
      { _id: id },
      { $inc: { n: by }, $setOnInsert: { siteId, expiresAt } },
      { upsert: true, returnDocument: 'after', projection: { n: 1 } },
    );
  try {
    return (await run())?.n ?? by;
  } catch (error) {
    if ((error as { code?: number }).code !== 11000) throw error;
    return (await run())?.n ?? by;
  }
}

/** The batching window counters of this process, one per workspace database (`services.rateCounters`). */
export interface RateCounters {
  /** One hit on a bucket of this database. */
  hit(db: Db, siteId: string, name: string, bucket: string, limit: number, now: Date, windowMs?: number): Promise<WindowResult>;
}

export function createRateCounters(): RateCounters {
  // Keyed by the driver's Db object: services.workspaceDb hands out one per database and process.
  const byDb = new WeakMap<Db, ReturnType<typeof createWindowCounter>>();
  return {
    hit(db, siteId, name, bucket, limit, now, windowMs = WINDOW_MS) {
      let counter = byDb.get(db);
      if (!counter) {
        counter = createWindowCounter(db);
        byDb.set(db, counter);
      }
      return counter(siteId, name, bucket, limit, now, windowMs);
    },
  };
}

export const exceeded = (result: WindowResult) => result.count > result.limit;

/**
 * IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers-09): one list item per
 * policy, `r` = remaining, `t` = seconds to reset; the policies in `RateLimit-Policy`.
 */
export function rateLimitHeaders(results: readonly WindowResult[]): Record<string, string> {
  // A plain loop: this runs for every keyed answer, the management lane's included.
  let ratelimit = '';
  let policy = '';
  for (const r of results) {
    const separator = ratelimit === '' ? '' : ', ';
    ratelimit += `${separator}"${r.name}";r=${Math.max(0, r.limit - r.count)};t=${r.resetSeconds}`;
    policy += `${separator}"${r.name}";q=${r.limit};w=60`;
  }
  return { ratelimit, 'ratelimit-policy': policy };
}

/**
 * Old windows are dropped now and then (the local engine has no TTL indexes): every site's of the
 * database, through the TTL index `{ expiresAt }` (a window past is past whoever counted in it).
 */
export async function purgeOldWindows(db: Db, now: Date): Promise<number> {
  return (await accessCollections(db).counters.deleteMany({ expiresAt: { $lt: now } })).deletedCount;
}
