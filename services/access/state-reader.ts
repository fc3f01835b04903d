import type { Db } from 'mongodb';
import type { ChangeFeed } from '../core/change-feed.ts';
import { createFeedCache } from '../core/feed-cache.ts';
import { topics } from '../core/topics.ts';
import { readAccessState, type AccessState } from './site-settings-store.ts';
import { createKeyedBatcher } from '../core/batching.ts';

/** Database names and site ids hold no spaces. */
const laneOf = (dbName: string, siteId: string) => `${dbName} ${siteId}`;

/**
 * The site's access state (switches + version). While the change feed vouches for this process it
 * comes from memory (a change is pushed: `site-access:<siteId>`); otherwise it is read for every
 * request, coalesced per gateway: requests that arrive while a read is in flight share the next
 * read, which starts after they arrived, so a switch flipped before a request is always seen by it.
 */
export function createStateReader(feed: ChangeFeed, workspaceDb: (dbName: string) => Db) {
  const cache = createFeedCache<AccessState>(feed);
  const read = createKeyedBatcher<null, AccessState>(async (lane, items) => {
    const [dbName, siteId] = lane.split(' ');
    const state = await readAccessState(workspaceDb(dbName), siteId);
    return items.map(() => state);
  });
  const reader = (db: Db, siteId: string): Promise<AccessState> => {
    const lane = laneOf(db.databaseName, siteId);
    return cache.read(
      lane,
      () => read(lane, null),
      () => [topics.siteAccess(siteId)],
    );
  };
  /** The state held in memory, when the feed vouches for it: lets the hot path skip a promise. */
  reader.peek = (dbName: string, siteId: string): AccessState | undefined => cache.peek(laneOf(dbName, siteId));
  /** The same through a database outage: what the public cache-hit lane reads (core/change-feed.ts `servesThroughOutage`). */
  reader.peekThroughOutage = (dbName: string, siteId: string): AccessState | undefined => cache.peekThroughOutage(laneOf(dbName, siteId));
  return reader;
}

export type StateReader = ReturnType<typeof createStateReader>;
