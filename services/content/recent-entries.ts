import type { Db } from 'mongodb';
import type { EntryDoc } from './model.ts';

/** Written states a process keeps: enough for every entry a burst of editors or clients is changing… */
const KEPT = 1000;
/** …within this much memory (an entry's text as JSON, its published snapshot included: 2 KB for a short post, up to a few MB under the body limit). */
const KEPT_CHARS = 32 * 1024 * 1024;

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
  /** Keeps `doc` as the entry's last written state (a copy), dropping the oldest past `KEPT` or `KEPT_CHARS`. */
  remember(db: Db, doc: EntryDoc): void;
  forget(db: Db, siteId: string, id: string): void;
}

export function createRecentEntries(kept = KEPT, keptChars = KEPT_CHARS): RecentEntries {
  // A Map keeps insertion order: the first key is the state written longest ago.
  const states = new Map<string, { doc: EntryDoc; chars: number }>();
  let chars = 0;
  const keyOf = (db: Db, siteId: string, id: string) => `${db.databaseName}|${siteId}|${id}`;
  const drop = (key: string) => {
    const held = states.get(key);
    if (!held) return;
    states.delete(key);
    chars -= held.chars;
  };
  return {
    get(db, siteId, id) {
      const held = states.get(keyOf(db, siteId, id));
      return held && { ...held.doc };
    },
    remember(db, doc) {
      const key = keyOf(db, doc.siteId, doc._id);
      drop(key);
      const size = JSON.stringify(doc).length;
      // An entry too big to keep beside the others is read again by its next change.
      if (size > keptChars / 8) return;
      states.set(key, { doc: { ...doc }, chars: size });
      chars += size;
      while (states.size > kept || chars > keptChars) drop(states.keys().next().value!);
    },
    forget(db, siteId, id) {
      drop(keyOf(db, siteId, id));
    },
  };
}
