import type { Collection } from 'mongodb';
import type { Logger } from 'pino';
import { unreachableEngine } from '../core/engines.ts';
import { onlyDuplicateWrites } from '../core/mongo-errors.ts';
import type { AuditDoc } from './model.ts';

/** Rows a process holds for one collection at most; past that a burst's rows are dropped and logged. */
const MAX_QUEUED = 10_000;
/**
 * How long a group gathers before its insert: writes one after another (an import, a benchmark, an
 * editor's burst) then cost one audit insert per window instead of one per write, so the audit
 * hardly competes with the next write for the engine.
 */
const GATHER_MS = 20;
/**
 * While the database is missing, a group is tried again this often, for this long: the writes it
 * records were acknowledged before the engine went, and an outage of seconds must not lose their rows.
 */
const RETRY_EVERY_MS = 1000;
const RETRY_FOR_MS = 60_000;

export interface AuditTrailOptions {
  /** Writes one group of rows. Tests replace it to make the audit store refuse writes. */
  write?(collection: Collection<AuditDoc>, rows: AuditDoc[]): Promise<void>;
}

/** The process's audit writer (`services.audit`): rows queued after their change, written in groups. */
export interface AuditTrail {
  /** Queues one row; never throws, never waits for the database. */
  add(collection: Collection<AuditDoc>, row: AuditDoc): void;
  /** Resolves once every row queued so far is written or given up (tests, shutdown). */
  settled(): Promise<void>;
}

interface Lane {
  collection: Collection<AuditDoc>;
  queue: AuditDoc[];
  running: Promise<void>;
}

/**
 * Group commit per collection, like the event outbox: the first row waits `GATHER_MS`, then every
 * row queued meanwhile goes in one insert; rows queued while that insert is in flight go together
 * in the next one. The change the row records is already done,
 * so nothing waits for it and a failed insert is logged and dropped, never raised into the write.
 */
export function createAuditTrail(log: Logger, options: AuditTrailOptions = {}): AuditTrail {
  const write =
    options.write ??
    (async (collection: Collection<AuditDoc>, rows: AuditDoc[]) => {
      await collection.insertMany(rows, { ordered: false });
    });
  const lanes = new Map<string, Lane>();

  async function writeThroughOutage(collection: Collection<AuditDoc>, rows: AuditDoc[]): Promise<void> {
    const giveUpAt = Date.now() + RETRY_FOR_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        await write(collection, rows);
        return;
      } catch (error) {
        // Every row of the group is in: the insert landed before, only its answer was lost (rows carry their own `_id`).
        if (attempt > 0 && onlyDuplicateWrites(error)) return;
        if (unreachableEngine(error) !== 'database' || Date.now() > giveUpAt) throw error;
        await new Promise((resolve) => setTimeout(resolve, RETRY_EVERY_MS));
      }
    }
  }

  async function drain(key: string, lane: Lane): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, GATHER_MS));
    while (lane.queue.length > 0) {
      const rows = lane.queue;
      lane.queue = [];
      try {
        await writeThroughOutage(lane.collection, rows);
      } catch (error) {
        log.error(
          { err: error instanceof Error ? error.message : String(error), rows: rows.length, actions: [...new Set(rows.map((row) => row.action))] },
          'audit rows not written',
        );
      }
    }
    lanes.delete(key);
  }

  return {
    add(collection, row) {
      const key = `${collection.dbName}.${collection.collectionName}`;
      const lane = lanes.get(key);
      if (lane && lane.queue.length >= MAX_QUEUED) {
        log.error({ action: row.action, collection: key }, 'audit row dropped: too many rows waiting');
        return;
      }
      if (!lane) {
        const fresh: Lane = { collection, queue: [row], running: Promise.resolve() };
        lanes.set(key, fresh);
        fresh.running = drain(key, fresh);
        return;
      }
      lane.queue.push(row);
    },
    async settled() {
      while (lanes.size > 0) await Promise.all([...lanes.values()].map((lane) => lane.running));
    },
  };
}
