/**
 * Runs `work` over `items`, `lanes` at a time, each lane taking the next item as soon as it is free
 * (no wave waits for its slowest). The first failure stops every lane before its next item and is
 * what this rejects with.
 */
export async function sideBySide<T>(items: readonly T[], lanes: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const lane = async () => {
    while (!failed && next < items.length) {
      const item = items[next++];
      try {
        await work(item);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(lanes, items.length) }, lane));
}
