import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { ObjectId, type ChangeStream, type Db } from 'mongodb';
import type { Logger } from 'pino';

/**
 * The change feed that lets each gateway hold access and workspace state in memory and still be
 * exact on the next request (protocol: docs/access.md, "State held by each gateway").
 *
 * - A write that changes who gets in appends a change (`topic`) to `state_changes` and returns only
 *   once every gateway holding a live lease has acknowledged it (dropped what it cached for the
 *   topic) or its lease has lapsed and the writer has evicted it.
 * - A gateway serves from its caches only while `trusted()`: its change stream is open, and a lease
 *   renewed less than `leaseMs` ago. A renewal first writes a ping through the feed and waits to
 *   read it back, so every change committed before the ping has been applied when the lease grows.
 * - Lease and eviction are compare-and-set on the gateway's row: either the renewal wins (and the
 *   writer waits for the acknowledgement) or the eviction wins (and the gateway starts a new session
 *   with empty caches). A gateway that loses its feed stops trusting at once and releases its lease.
 */
export interface ChangeFeed {
  /** True while this process may answer from its caches. Cheap: called on every request. */
  trusted(): boolean;
  /** Bumped by every change applied and every loss of trust; a read that saw the epoch move is not cached. */
  epoch(): number;
  /** Called for every change applied (before it is acknowledged), and with `null` when all caches must go. */
  subscribe(listener: (topic: string | null) => void): void;
  /** Records a change; resolves once every live gateway dropped the old state (or its lease lapsed). */
  publish(topic: string): Promise<void>;
  /** Records a change without waiting for acknowledgements (freshness, not access). */
  announce(topic: string): Promise<void>;
  /** Opens the feed and keeps it (re)opened until `stop()`. Only processes that serve requests start it. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Closes the stream as a network cut would (tests and diagnostics); it reopens after `pauseMs`. */
  cut(pauseMs: number): void;
  /** What `trusted()` is made of, for health output and tests. */
  status(): { session: string | null; streamOpen: boolean; trustedForMs: number };
}

export interface ChangeFeedOptions {
  db: Db;
  log: Logger;
  leaseMs: number;
  /** Allowed clock difference between processes when a writer judges a lease lapsed. */
  skewMs?: number;
  /** How long an idle stream waits between polls (servers without awaitData answer at once). */
  idlePollMs?: number;
}

interface ChangeDoc {
  _id: ObjectId;
  topic: string;
  at: Date;
  acked: string[];
}

interface GatewayDoc {
  _id: string;
  leaseUntil: Date;
  evicted: boolean;
  pid: number;
  startedAt: Date;
}

export const STATE_CHANGES_COLLECTION = 'state_changes';
export const GATEWAYS_COLLECTION = 'gateways';
const PING_PREFIX = 'ping:';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export function createChangeFeed(options: ChangeFeedOptions): ChangeFeed {
  const { db, log, leaseMs } = options;
  const skewMs = options.skewMs ?? 1000;
  const idlePollMs = options.idlePollMs ?? 40;
  const changes = db.collection<ChangeDoc>(STATE_CHANGES_COLLECTION);
  const gateways = db.collection<GatewayDoc>(GATEWAYS_COLLECTION);
  const processId = randomBytes(6).toString('hex');
  const listeners: ((topic: string | null) => void)[] = [];

  let running = false;
  let stream: ChangeStream<ChangeDoc> | null = null;
  let session: string | null = null;
  let sessionCount = 0;
  let trustUntil = 0;
  let epoch = 0;
  let pausedUntil = 0;
  let loop: Promise<void> | null = null;
  const pings = new Map<string, () => void>();

  const notify = (topic: string | null) => {
    epoch++;
    for (const listener of listeners) {
      try {
        listener(topic);
      } catch (error) {
        log.error({ err: error }, 'state cache listener failed');
      }
    }
  };

  /** Stop trusting first, then drop every cache, then tell writers not to wait for us. */
  async function loseTrust(reason: string) {
    const was = session;
    trustUntil = 0;
    session = null;
    notify(null);
    if (was) {
      log.warn({ reason, session: was }, 'state feed down: per-request reads until it is back');
      await gateways.updateOne({ _id: was }, { $set: { leaseUntil: new Date(0) } }).catch(() => undefined);
    }
  }

  async function apply(doc: ChangeDoc, mine: string) {
    if (doc.topic.startsWith(PING_PREFIX)) {
      pings.get(doc.topic)?.();
      return;
    }
    notify(doc.topic);
    await changes.updateOne({ _id: doc._id }, { $addToSet: { acked: mine } });
  }

  /** Ping through the feed, then grow the lease if nobody evicted this session meanwhile. */
  async function renew(mine: string, first: boolean): Promise<boolean> {
    const startedMono = performance.now();
    const leaseUntil = new Date(Date.now() + leaseMs);
    const topic = `${PING_PREFIX}${mine}:${new ObjectId().toHexString()}`;
    const seen = new Promise<boolean>((resolve) => {
      pings.set(topic, () => resolve(true));
      setTimeout(() => resolve(false), Math.max(200, leaseMs / 3)).unref();
    });
    try {
      await changes.insertOne({ _id: new ObjectId(), topic, at: new Date(), acked: [] });
      if (!(await seen)) return false;
    } finally {
      pings.delete(topic);
    }
    if (first) {
      await gateways.insertOne({ _id: mine, leaseUntil, evicted: false, pid: process.pid, startedAt: new Date() });
    } else {
      const renewed = await gateways.updateOne({ _id: mine, evicted: false }, { $set: { leaseUntil } });
      if (renewed.matchedCount === 0) return false;
    }
    if (session === mine) trustUntil = startedMono + leaseMs;
    return true;
  }

  async function runSession() {
    const mine = `${processId}-${++sessionCount}`;
    const opened = changes.watch<ChangeDoc>([{ $match: { operationType: 'insert' } }], { maxAwaitTimeMS: 1000 });
    stream = opened;
    try {
      // The aggregate runs here: every change committed from now on will come through.
      let pending = await opened.tryNext();
      session = mine;
      // Anything cached before the stream opened may have missed a change: start empty.
      notify(null);
      const reader = (async () => {
        while (running && session === mine) {
          if (pending) {
            if (pending.operationType === 'insert') await apply(pending.fullDocument, mine);
            pending = null;
          }
          pending = await opened.tryNext();
          if (!pending) await sleep(idlePollMs);
        }
      })();
      const ended = reader.then(
        () => false,
        (error: unknown) => {
          if (running && session === mine) log.warn({ err: error }, 'state feed stream failed');
          return false;
        },
      );
      let first = true;
      while (running && session === mine) {
        const ok = await Promise.race([renew(mine, first).catch(() => false), ended]);
        if (!ok) break;
        first = false;
        await Promise.race([sleep(leaseMs / 3), ended]);
      }
    } finally {
      if (session === mine) await loseTrust('feed lost or lease not renewed');
      stream = null;
      await opened.close().catch(() => undefined);
    }
  }

  async function keepOpen() {
    while (running) {
      const wait = pausedUntil - Date.now();
      if (wait > 0) await sleep(wait);
      try {
        await runSession();
      } catch (error) {
        log.warn({ err: error }, 'state feed error');
      }
      if (running) await sleep(250);
    }
  }

  /** Drop changes and gateway rows nobody needs any more (the local engine has no TTL indexes). */
  async function purge() {
    const before = new Date(Date.now() - 10 * 60_000);
    await changes.deleteMany({ at: { $lt: before } });
    await gateways.deleteMany({ leaseUntil: { $lt: before } });
  }

  return {
    trusted: () => session !== null && performance.now() < trustUntil,
    epoch: () => epoch,
    subscribe(listener) {
      listeners.push(listener);
    },

    async publish(topic) {
      const change = await changes.insertOne({ _id: new ObjectId(), topic, at: new Date(), acked: [] });
      let delay = 2;
      const giveUp = Date.now() + 2 * leaseMs + skewMs + 5000;
      for (;;) {
        const [doc, live] = await Promise.all([
          changes.findOne({ _id: change.insertedId }, { projection: { acked: 1 } }),
          gateways.find({ evicted: false, leaseUntil: { $gt: new Date(0) } }).toArray(),
        ]);
        const acked = new Set(doc?.acked ?? []);
        const waiting = live.filter((gateway) => !acked.has(gateway._id));
        let blocked = false;
        for (const gateway of waiting) {
          if (gateway.leaseUntil.getTime() + skewMs > Date.now()) {
            blocked = true;
            continue;
          }
          // Lapsed: evict it unless it renewed meanwhile (then it is alive and will acknowledge).
          const evicted = await gateways.updateOne({ _id: gateway._id, leaseUntil: gateway.leaseUntil, evicted: false }, { $set: { evicted: true } });
          if (evicted.modifiedCount === 0) blocked = true;
        }
        if (!blocked) return;
        if (Date.now() > giveUp) throw new Error(`state change ${topic} not acknowledged in time`);
        await sleep(delay);
        delay = Math.min(delay * 2, 25);
      }
    },

    async announce(topic) {
      await changes.insertOne({ _id: new ObjectId(), topic, at: new Date(), acked: [] });
    },

    async start() {
      if (running) return;
      running = true;
      await purge().catch((error) => log.warn({ err: error }, 'state feed purge failed'));
      loop = keepOpen();
      // Callers (gateways) want the cached path from their first request when the feed is healthy.
      const until = Date.now() + 3000;
      while (!(session !== null && performance.now() < trustUntil) && Date.now() < until) await sleep(10);
    },

    async stop() {
      running = false;
      await stream?.close().catch(() => undefined);
      await loop?.catch(() => undefined);
      loop = null;
    },

    cut(pauseMs) {
      pausedUntil = Date.now() + pauseMs;
      const current = session;
      if (current) void loseTrust('feed cut');
      void stream?.close().catch(() => undefined);
    },

    status: () => ({
      session,
      streamOpen: stream !== null && !stream.closed,
      trustedForMs: Math.max(0, Math.round(trustUntil - performance.now())),
    }),
  };
}
