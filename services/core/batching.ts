/**
 * Keyed request coalescing that keeps "on the next request" exact: a call joins the batch that will
 * start after the one in flight finishes, never a batch already in flight. So the database work
 * serving a request always starts after the request arrived (a switch flipped or a key revoked
 * before that is seen), while under load one round trip serves every request that queued meanwhile.
 */
export function createKeyedBatcher<I, R>(flush: (key: string, items: I[]) => Promise<R[]>) {
  interface Waiter {
    item: I;
    resolve(value: R): void;
    reject(error: unknown): void;
  }
  const lanes = new Map<string, { running: boolean; queue: Waiter[] }>();

  async function drain(key: string, lane: { running: boolean; queue: Waiter[] }) {
    lane.running = true;
    while (lane.queue.length > 0) {
      const batch = lane.queue;
      lane.queue = [];
      try {
        const results = await flush(
          key,
          batch.map((waiter) => waiter.item),
        );
        batch.forEach((waiter, index) => waiter.resolve(results[index]));
      } catch (error) {
        for (const waiter of batch) waiter.reject(error);
      }
    }
    lane.running = false;
    lanes.delete(key);
  }

  return (key: string, item: I): Promise<R> =>
    new Promise<R>((resolve, reject) => {
      let lane = lanes.get(key);
      if (!lane) {
        lane = { running: false, queue: [] };
        lanes.set(key, lane);
      }
      lane.queue.push({ item, resolve, reject });
      if (!lane.running) void drain(key, lane);
    });
}
