/**
 * Runs `work` over `items`, `lanes` at a time, each lane taking the next item as soon as it is free
 * (no wave waits for its slowest); `work` is told its lane (0 … lanes-1), so memory a lane reuses
 * from item to item can be kept per lane. The first failure stops every lane before its next item
 * and is what this rejects with.
 */
export async function sideBySide<T>(items: readonly T[], lanes: number, work: (item: T, lane: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const lane = async (index: number) => {
    while (!failed && next < items.length) {
      const item = items[next++];
      try {
        await work(item, index);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(lanes, items.length) }, (_, index) => lane(index)));
}
