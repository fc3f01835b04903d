import type { Db } from 'mongodb';
import type { EntryDoc } from './model.ts';

/** Written states a process keeps: enough for every entry a burst of editors or clients is changing. */
const KEPT = 1000;

/**
 * The states of entries this process last wrote (`write-path.ts`), so a change that follows its own
 * write (an editor's create then publish, a save then another) computes from that state instead of
 * reading the entry again. Never a source of truth: the change's compare-and-set is filtered on the
 * state's version and `updatedAt`, so a state another process has moved since fails there, and the
 * change then reads the entry as before. Reads (get by id, lists) never use it.
 */
export interface RecentEntries {
  /** The state this process last wrote of the entry, if still kept (a copy: the caller may change it). */
  get(db: Db, siteId: string, id: string): EntryDoc | undefined;
  /** Keeps `doc` as the entry's last written state (a copy), dropping the oldest past `KEPT`. */
  remember(db: Db, doc: EntryDoc): void;
  forget(db: Db, siteId: string, id: string): void;
}

export function createRecentEntries(kept = KEPT): RecentEntries {
  // A Map keeps insertion order: the first key is the state written longest ago.
  const states = new Map<string, EntryDoc>();
  const keyOf = (db: Db, siteId: string, id: string) => `${db.databaseName}|${siteId}|${id}`;
  return {
    get(db, siteId, id) {
      const doc = states.get(keyOf(db, siteId, id));
      return doc && { ...doc };
    },
    remember(db, doc) {
      const key = keyOf(db, doc.siteId, doc._id);
      states.delete(key);
      states.set(key, { ...doc });
      if (states.size > kept) states.delete(states.keys().next().value!);
    },
    forget(db, siteId, id) {
      states.delete(keyOf(db, siteId, id));
    },
  };
}
