import type { Db } from 'mongodb';
import { createKeyedBatcher } from '../core/batching.ts';
import { syncEntriesSearch, type EntrySearchState } from './search-index.ts';

/** The write path's postings writes, grouped per workspace database and site. */
export interface SearchSync {
  /** Makes the entry's postings those of its current state (`syncEntriesSearch`); resolves once they are. */
  index(db: Db, siteId: string, state: EntrySearchState): Promise<void>;
}

/**
 * Entries written while a site's postings are being written are indexed together as soon as that
 * write is over (core/batching.ts): a group costs the commands one entry costs (about six), so
 * under concurrent writers the postings' share of a write's round trips falls with the group's size,
 * and a lone writer waits for nothing. The write still returns after its own postings are written.
 */
export function createSearchSync(): SearchSync {
  const grouped = createKeyedBatcher<{ db: Db; siteId: string; state: EntrySearchState }, void>(async (_lane, items) => {
    await syncEntriesSearch(
      items[0].db,
      items[0].siteId,
      items.map((item) => item.state),
    );
    return items.map(() => undefined);
  });
  return { index: (db, siteId, state) => grouped(`${db.databaseName}|${siteId}`, { db, siteId, state }) };
}
