import { describe, expect, it } from 'vitest';
import type { ChangeFeed } from '../../services/core/change-feed.ts';
import { createFeedCache } from '../../services/core/feed-cache.ts';

/** A feed that is always trusted and lets the test deliver changes. */
function fakeFeed() {
  const listeners: Array<(topic: string | null) => void> = [];
  const feed = {
    trusted: () => true,
    epoch: () => 0,
    changedSince: () => false,
    subscribe: (listener: (topic: string | null) => void) => void listeners.push(listener),
  } as unknown as ChangeFeed;
  return { feed, change: (topic: string | null) => listeners.forEach((l) => l(topic)) };
}

describe('feed cache', () => {
  it('keeps the entries that are read when full, and drops the oldest one nobody read', async () => {
    const { feed } = fakeFeed();
    const cache = createFeedCache<string>(feed, 3);
    const put = (key: string) =>
      cache.read(
        key,
        async () => `value ${key}`,
        () => [`topic:${key}`],
      );
    await put('a');
    await put('b');
    await put('c');
    expect(cache.peek('a')).toBe('value a'); // a is read: it gets a second chance
    await put('d'); // full: b (the oldest not read) goes
    expect(cache.size()).toBe(3);
    expect(cache.peek('b')).toBeUndefined();
    expect(cache.peek('a')).toBe('value a');
    expect(cache.peek('c')).toBe('value c');
    await put('e'); // c and a were read since: passed over again; d, never read, goes
    expect(cache.size()).toBe(3);
    expect(cache.peek('d')).toBeUndefined();
    expect(['a', 'c', 'e'].map((k) => cache.peek(k))).toEqual(['value a', 'value c', 'value e']);
  });

  it('drops an entry when a change of its topic arrives, and everything when trust is lost', async () => {
    const { feed, change } = fakeFeed();
    const cache = createFeedCache<string>(feed, 10);
    let loads = 0;
    const read = (key: string) =>
      cache.read(
        key,
        async () => `value ${key} #${++loads}`,
        () => [`topic:${key}`],
      );
    await read('a');
    await read('b');
    change('topic:a');
    expect(cache.peek('a')).toBeUndefined();
    expect(cache.peek('b')).toBe('value b #2');
    expect(await read('a')).toBe('value a #3');
    change(null);
    expect(cache.size()).toBe(0);
  });
});
