import type { Db } from 'mongodb';
import { countAndReadAccessState, type AccessState } from './site-settings-store.ts';
import { createKeyedBatcher } from '../core/batching.ts';

export const RATE_WINDOW_MS = 60_000;

/** Counter field names (no `.` or `$`): `k<keyId>`, `i<ip>` with `.`→`_` and `:`→`-`. */
export const keyField = (keyId: string) => `k${keyId}`;
export const ipField = (ip: string) => `i${ip.replace(/%.*$/, '').replace(/\./g, '_').replace(/:/g, '-')}`;

export interface LiveResult {
  state: AccessState;
  /** This request's position in each counted window (1 = first request of the minute). */
  counts: Record<string, number>;
  resetSeconds: number;
}

/**
 * Counts a key-authenticated request and reads the site's access state in one round trip (see
 * `countAndReadAccessState`), batched per site and minute: hits that queue while an update is in
 * flight go out together as one `$inc` by the batch's totals, and each hit gets its exact position.
 */
export function createLiveState() {
  const batch = createKeyedBatcher<{ db: Db; fields: readonly string[] }, Omit<LiveResult, 'resetSeconds'>>(async (lane, items) => {
    const [, siteId, windowText] = lane.split('|');
    const window = Number(windowText);
    const totals: Record<string, number> = {};
    for (const item of items) for (const field of item.fields) totals[field] = (totals[field] ?? 0) + 1;
    const stale = [1, 2, 3].map((back) => window - back * RATE_WINDOW_MS);
    const { state, counts } = await countAndReadAccessState(items[0].db, siteId, window, totals, stale);
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
