import type { Db } from 'mongodb';
import { countAndReadAccessState, type AccessState } from './site-settings-store.ts';
import { counterId, raiseCounter } from './rate-limit.ts';
import { createKeyedBatcher } from '../core/batching.ts';

export const RATE_WINDOW_MS = 60_000;

/** Counter field names (no `.` or `$`): `k<keyId>`, `i<ip>` with `.`→`_` and `:`→`-`. */
export const keyField = (keyId: string) => `k${keyId}`;
export const ipField = (ip: string) => `i${ip.replace(/%.*$/, '').replace(/\./g, '_').replace(/:/g, '-')}`;
const isIpField = (field: string) => field.startsWith('i');

/**
 * Raises per-IP counter fields, each on its own document in `rate_counters` (expiring with its
 * window): there is one per client address, and addresses are not ours to bound, so they never
 * sit on the site's settings document, which a keyed request reads on every request.
 */
export async function raiseIpCounters(db: Db, siteId: string, window: number, increments: Record<string, number>): Promise<Record<string, number>> {
  const expiresAt = new Date(window + RATE_WINDOW_MS);
  const fields = Object.keys(increments);
  const totals = await Promise.all(fields.map((field) => raiseCounter(db, counterId(siteId, `req:${field}`, window), increments[field], siteId, expiresAt)));
  return Object.fromEntries(fields.map((field, index) => [field, totals[index]]));
}

/**
 * Raises a keyed request's counters and reads the site's access state, side by side (one round
 * trip of latency): the key fields (one per key in use) on the settings document, in the
 * statement that reads the state, and the IP fields on their own documents (`raiseIpCounters`).
 */
export async function countAndReadLive(
  db: Db,
  siteId: string,
  window: number,
  increments: Record<string, number>,
  staleWindows: readonly number[],
): Promise<{ state: AccessState; counts: Record<string, number> }> {
  const onSettings: Record<string, number> = {};
  const onTheirOwn: Record<string, number> = {};
  for (const [field, by] of Object.entries(increments)) (isIpField(field) ? onTheirOwn : onSettings)[field] = by;
  const [read, ipCounts] = await Promise.all([
    countAndReadAccessState(db, siteId, window, onSettings, staleWindows),
    raiseIpCounters(db, siteId, window, onTheirOwn),
  ]);
  return { state: read.state, counts: { ...read.counts, ...ipCounts } };
}

/** Raises counter fields wherever each lives and answers their totals (the management lane's block claims). */
export async function raiseCounterFields(db: Db, siteId: string, window: number, increments: Record<string, number>): Promise<Record<string, number>> {
  if (Object.keys(increments).every(isIpField)) return raiseIpCounters(db, siteId, window, increments);
  return (await countAndReadLive(db, siteId, window, increments, [])).counts;
}

export interface LiveResult {
  state: AccessState;
  /** This request's position in each counted window (1 = first request of the minute). */
  counts: Record<string, number>;
  resetSeconds: number;
}

/**
 * Counts a key-authenticated request and reads the site's access state in one round trip (see
 * `countAndReadLive`), batched per site and minute: hits that queue while an update is in
 * flight go out together as one `$inc` by the batch's totals, and each hit gets its exact position.
 */
export function createLiveState() {
  const batch = createKeyedBatcher<{ db: Db; fields: readonly string[] }, Omit<LiveResult, 'resetSeconds'>>(async (lane, items) => {
    const [, siteId, windowText] = lane.split('|');
    const window = Number(windowText);
    const totals: Record<string, number> = {};
    for (const item of items) for (const field of item.fields) totals[field] = (totals[field] ?? 0) + 1;
    const stale = [1, 2, 3].map((back) => window - back * RATE_WINDOW_MS);
    const { state, counts } = await countAndReadLive(items[0].db, siteId, window, totals, stale);
    const seen: Record<string, number> = {};
    return items.map((item) => {
      const mine: Record<string, number> = {};
      for (const field of item.fields) {
        seen[field] = (seen[field] ?? 0) + 1;
        mine[field] = (counts[field] ?? totals[field]) - totals[field] + seen[field];
      }
      return { state, counts: mine };
    });
  });

  return async (db: Db, siteId: string, now: Date, fields: readonly string[]): Promise<LiveResult> => {
    const window = Math.floor(now.getTime() / RATE_WINDOW_MS) * RATE_WINDOW_MS;
    // Database names and site ids never contain '|'.
    const result = await batch(`${db.databaseName}|${siteId}|${window}`, { db, fields });
    return { ...result, resetSeconds: Math.max(1, Math.ceil((window + RATE_WINDOW_MS - now.getTime()) / 1000)) };
  };
}
