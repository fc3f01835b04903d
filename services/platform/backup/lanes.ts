/**
 * Runs `work` over `items`, `lanes` at a time, each lane taking the next item as soon as it is free
 * (no wave waits for its slowest); `work` is told its lane (0 … lanes-1), so memory a lane reuses
 * from item to item can be kept per lane. The first failure stops every lane before its next item;
 * this rejects with it once every lane has stopped (nothing of it still writes when a retry begins).
 */
export async function sideBySide<T>(items: readonly T[], lanes: number, work: (item: T, lane: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | null = null;
  const lane = async (index: number) => {
    while (!failure && next < items.length) {
      const item = items[next++];
      try {
        await work(item, index);
      } catch (error) {
        failure ??= { error };
        return;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(lanes, items.length) }, (_, index) => lane(index)));
  // Set by the lanes (TypeScript does not see the closures assign it).
  const failed = failure as { error: unknown } | null;
  if (failed) throw failed.error;
}
