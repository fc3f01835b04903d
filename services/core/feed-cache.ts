import type { ChangeFeed } from './change-feed.ts';

/**
 * A per-process cache whose entries are used only while the change feed vouches for them
 * (`feed.trusted()`), dropped by topic when a change is applied, and all dropped when trust is lost.
 * A value loaded while a change was being applied is returned to its caller but not kept: the
 * change may have been committed after the load read the database.
 */
export interface FeedCache<V> {
  /** The cached value, when the feed vouches for it (synchronous: the hot path needs no promise). */
  peek(key: string): V | undefined;
  /**
   * Cached value, or `load()` (kept when the feed stayed trusted and quiet during the load), tagged
   * with the topics whose changes must drop it.
   */
  read(key: string, load: () => Promise<V>, topicsOf: (value: V) => readonly string[]): Promise<V>;
  size(): number;
  /** Drops this process's entries (an operator's "clear cache"). */
  clear(): void;
}

export function createFeedCache<V>(feed: ChangeFeed, maxEntries = 50_000): FeedCache<V> {
  const entries = new Map<string, V>();
  const byTopic = new Map<string, Set<string>>();

  const clear = () => {
    entries.clear();
    byTopic.clear();
  };
  feed.subscribe((topic) => {
    if (topic === null) return clear();
    const keys = byTopic.get(topic);
    if (!keys) return;
    byTopic.delete(topic);
    for (const key of keys) entries.delete(key);
  });

  const peek = (key: string) => (feed.trusted() ? entries.get(key) : undefined);

  return {
    peek,
    async read(key, load, topicsOf) {
      const hit = peek(key);
      if (hit !== undefined) return hit;
      const epoch = feed.epoch();
      const trustedAtStart = feed.trusted();
      const value = await load();
      if (trustedAtStart && feed.trusted() && feed.epoch() === epoch) {
        if (entries.size >= maxEntries) clear();
        entries.set(key, value);
        for (const topic of topicsOf(value)) {
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
