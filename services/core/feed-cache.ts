import type { ChangeFeed } from './change-feed.ts';

/**
 * A per-process cache whose entries are used only while the change feed vouches for them
 * (`feed.trusted()`), dropped by topic when a change is applied, and all dropped when trust is lost.
 * A value loaded while a change of one of its topics was applied (or trust was lost) is returned
 * to its caller but not kept: the change may have been committed after the load read the database.
 */
export interface FeedCache<V> {
  /** The cached value, when the feed vouches for it (synchronous: the hot path needs no promise). */
  peek(key: string): V | undefined;
  /** `peek`, and through a database outage what was held when it went (`feed.servesThroughOutage`: the public lane only). */
  peekThroughOutage(key: string): V | undefined;
  /**
   * Cached value, or `load()` (kept when the feed stayed trusted and no change of the value's
   * topics arrived during the load), tagged with the topics whose changes must drop it; `null`
   * topics: a value not to keep.
   */
  read(key: string, load: () => Promise<V>, topicsOf: (value: V) => readonly string[] | null): Promise<V>;
  size(): number;
  /** Drops this process's entries (an operator's "clear cache"). */
  clear(): void;
}

/**
 * At most `maxEntries` values are held (a value remembers its topics so eviction leaves no tag
 * behind): thousands of hosts or random Host headers cost bounded memory. Eviction is second-chance
 * (CLOCK): a hit only marks its entry, and a full cache drops the oldest entry not hit since it was
 * last passed over. A hit on the read path is then one `Map.get`: moving the key to the young end
 * on every hit (a delete and a set) was a measurable share of a held answer's cost (bench/RESULTS.md, read path).
 */
export function createFeedCache<V>(feed: ChangeFeed, maxEntries = 50_000): FeedCache<V> {
  const entries = new Map<string, { value: V; topics: readonly string[]; used: boolean }>();
  const byTopic = new Map<string, Set<string>>();

  const clear = () => {
    entries.clear();
    byTopic.clear();
  };
  const drop = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    for (const topic of entry.topics) {
      const keys = byTopic.get(topic);
      keys?.delete(key);
      if (keys?.size === 0) byTopic.delete(topic);
    }
  };
  feed.subscribe((topic) => {
    if (topic === null) return clear();
    const keys = byTopic.get(topic);
    if (!keys) return;
    for (const key of [...keys]) drop(key);
  });

  const peek = (key: string, throughOutage = false) => {
    if (!(throughOutage ? feed.servesThroughOutage() : feed.trusted())) return undefined;
    const entry = entries.get(key);
    if (!entry) return undefined;
    entry.used = true;
    return entry.value;
  };
  /** Makes room for one entry: the oldest not hit since it was last passed over goes. */
  const evict = () => {
    for (const [key, entry] of entries) {
      if (!entry.used) return drop(key);
      entry.used = false;
      entries.delete(key);
      entries.set(key, entry); // passed over: to the young end, unmarked
    }
  };

  return {
    peek: (key) => peek(key),
    peekThroughOutage: (key) => peek(key, true),
    async read(key, load, topicsOf) {
      const hit = peek(key);
      if (hit !== undefined) return hit;
      const epoch = feed.epoch();
      const trustedAtStart = feed.trusted();
      const value = await load();
      const tags = topicsOf(value);
      if (tags && trustedAtStart && feed.trusted() && !feed.changedSince(epoch, tags)) {
        drop(key);
        while (entries.size >= maxEntries) evict();
        entries.set(key, { value, topics: tags, used: false });
        for (const topic of tags) {
          let keys = byTopic.get(topic);
          if (!keys) byTopic.set(topic, (keys = new Set()));
          keys.add(key);
        }
      }
      return value;
    },
    size: () => entries.size,
    clear,
  };
}
