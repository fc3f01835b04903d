import type { Db } from 'mongodb';
import type { PublicGeneration } from '../core/public-generation.ts';
import { syncEntriesSearch, type EntrySearchState } from './search-index.ts';

/**
 * How long a site's postings gather before they are written. An editor's create and the publish
 * that follows it (or a burst of changes to one entry) then land as the entry's last state only,
 * and a group's commands serve every write of the window (bench/RESULTS.md, session 22).
 */
const GATHER_MS = 100;

/** The write path's postings writes, gathered per workspace database and site. */
export interface SearchSync {
  /**
   * Queues the entry's postings (`syncEntriesSearch`); resolves once they are written. `now`: write
   * them without waiting for the window (a job's durable write, which clears its owed marker after).
   */
  index(db: Db, siteId: string, state: EntrySearchState, options?: { now?: boolean }): Promise<void>;
  /** Writes at once what is queued for the site and resolves once it is: a search reads what this process wrote before it. */
  written(db: Db, siteId: string): Promise<void>;
  /** Writes every queued posting (a stop), resolving once all are written or failed. */
  settled(): Promise<void>;
}

interface Waiter {
  state: EntrySearchState;
  done: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

interface Lane {
  db: Db;
  siteId: string;
  queue: Waiter[];
  timer: NodeJS.Timeout | null;
  running: Promise<void> | null;
  /** What is queued meanwhile goes as soon as the running group is in, without a window (a search or a durable write waits). */
  urgent: boolean;
}

/**
 * Group commit per site, like the audit trail: the first write of a site waits `GATHER_MS`, then
 * every entry queued meanwhile is indexed in one group (an entry queued twice from its last state),
 * then the site's public generation moves when the group holds a published entry, so a public
 * search cached while its postings were on their way is computed again. Entries queued while a
 * group is written go in the next one, after its own window. The write path does not wait for its
 * postings (docs/content.md, "Search"): a search in this process first writes what is queued for
 * its site (`written`), one in another process finds a write once its group is in, within about
 * `GATHER_MS`.
 */
export function createSearchSync(publicGeneration: PublicGeneration): SearchSync {
  const lanes = new Map<string, Lane>();

  const run = (key: string, lane: Lane): Promise<void> => {
    if (lane.timer) clearTimeout(lane.timer);
    lane.timer = null;
    lane.running ??= (async () => {
      lane.urgent = false;
      const batch = lane.queue;
      lane.queue = [];
      try {
        await syncEntriesSearch(
          lane.db,
          lane.siteId,
          batch.map((waiter) => waiter.state),
        );
        // Only a published entry's postings can add to a public search: an entry no longer published
        // is dropped by the search's read of the entries, and its write moved the generation itself.
        if (batch.some(({ state }) => state.doc?.status === 'published')) await publicGeneration.written(lane.db, lane.siteId);
        for (const waiter of batch) waiter.resolve();
      } catch (error) {
        for (const waiter of batch) waiter.reject(error);
      }
    })().finally(() => {
      lane.running = null;
      if (lane.queue.length > 0 && lane.urgent) void run(key, lane);
      else if (lane.queue.length > 0) gather(key, lane);
      else if (!lane.timer) lanes.delete(key);
    });
    return lane.running;
  };

  const gather = (key: string, lane: Lane) => {
    lane.timer ??= setTimeout(() => void run(key, lane), GATHER_MS);
  };

  /** Writes the lane's queue now, or right after the group being written. */
  const hurry = (key: string, lane: Lane) => {
    if (lane.running) lane.urgent = true;
    else void run(key, lane);
  };

  const keyOf = (db: Db, siteId: string) => `${db.databaseName}|${siteId}`;

  const laneOf = (db: Db, siteId: string): [string, Lane] => {
    const key = keyOf(db, siteId);
    let lane = lanes.get(key);
    if (!lane) {
      lane = { db, siteId, queue: [], timer: null, running: null, urgent: false };
      lanes.set(key, lane);
    }
    return [key, lane];
  };

  /** What is queued or being written for the lane now, done (written or failed). */
  const inFlight = (lane: Lane) => Promise.allSettled([lane.running, ...lane.queue.map((waiter) => waiter.done)]).then(() => undefined);

  return {
    index(db, siteId, state, { now = false } = {}) {
      const [key, lane] = laneOf(db, siteId);
      let resolve!: () => void;
      let reject!: (error: unknown) => void;
      const done = new Promise<void>((yes, no) => {
        resolve = yes;
        reject = no;
      });
      lane.queue.push({ state, done, resolve, reject });
      if (now) hurry(key, lane);
      else if (!lane.running) gather(key, lane);
      return done;
    },
    async written(db, siteId) {
      const key = keyOf(db, siteId);
      const lane = lanes.get(key);
      if (!lane) return;
      const waited = inFlight(lane);
      hurry(key, lane);
      await waited;
    },
    async settled() {
      while (lanes.size > 0) {
        for (const [key, lane] of lanes) hurry(key, lane);
        await Promise.all([...lanes.values()].map(inFlight));
      }
    },
  };
}
