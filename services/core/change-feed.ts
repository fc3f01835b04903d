import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { ObjectId, type ChangeStream, type Db } from 'mongodb';
import type { Logger } from 'pino';

/**
 * The change feed that lets each gateway hold access and workspace state in memory and still be
 * exact on the next request (protocol: docs/access.md, "State held by each gateway").
 *
 * - A write that changes who gets in appends a change (the `topics` it invalidates) to
 *   `state_changes` and returns only once every gateway holding a live lease has acknowledged it
 *   (dropped what it cached for those topics) or its lease has lapsed and the writer has evicted it.
 * - A gateway serves from its caches only while `trusted()`: its change stream is open, and a lease
 *   renewed less than `leaseMs` ago. A renewal first reads the changes it has not acknowledged and
 *   applies them, so every change committed before the renewal began is applied when the lease grows.
 * - Lease and eviction are compare-and-set on the gateway's row: either the renewal wins (and the
 *   writer waits for the acknowledgement) or the eviction wins (and the gateway starts a new session
 *   with empty caches). A gateway that loses its feed stops trusting at once and releases its lease.
 */
export interface ChangeFeed {
  /** True while this process may answer from its caches. Cheap: called on every request. */
  trusted(): boolean;
  /** Bumped by every change applied and every loss of trust (pair with `changedSince`). */
  epoch(): number;
  /**
   * True when, since `epoch()` returned `since`, trust was lost or a change to one of `topics` was
   * applied: a value loaded meanwhile may be older than that change and must not be kept. Changes
   * to other topics do not matter, so a busy feed (thousands of workspaces) does not stop caching.
   */
  changedSince(since: number, topics: readonly string[]): boolean;
  /** Called for every change applied (before it is acknowledged), and with `null` when all caches must go. */
  subscribe(listener: (topic: string | null) => void): void;
  /** Records one change of these topics; resolves once every live gateway dropped the old state (or its lease lapsed). */
  publish(topics: string | readonly string[]): Promise<void>;
  /** Records a change without waiting for acknowledgements (freshness, not access). */
  announce(topics: string | readonly string[]): Promise<void>;
  /**
   * `announce` without a row of its own when another is written within `withinMs` (a request's
   * writes and its content announcement share one); else its own row once that time has passed.
   * Nobody waits for it; a failed row is logged.
   */
  announceWithin(topics: string | readonly string[], withinMs: number): void;
  /** Opens the feed and keeps it (re)opened until `stop()`. Only processes that serve requests start it. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Closes the stream as a network cut would (tests and diagnostics); it reopens after `pauseMs`. */
  cut(pauseMs: number): void;
  /** What `trusted()` is made of, for health output and tests. */
  status(): { session: string | null; streamOpen: boolean; trustedForMs: number };
  /**
   * `trusted()`, or the database is missing (docs/production.md, "Degrade, never hang"): nothing can
   * be written anywhere then, so trust lost to the outage keeps the caches as they were (what the
   * feed had applied when it went) until the feed is back and starts them empty. Only the public
   * cache-hit lane reads through an outage (stale public reads rather than none); access never does.
   */
  servesThroughOutage(): boolean;
}

export interface ChangeFeedOptions {
  db: Db;
  log: Logger;
  leaseMs: number;
  /** Allowed clock difference between processes when a writer judges a lease lapsed. */
  skewMs?: number;
  /** How long an idle feed waits between polls (servers without awaitData answer at once). */
  idlePollMs?: number;
  /**
   * `change-stream`: a MongoDB change stream on `state_changes` (push; needs a replica set).
   * `poll`: a small query on `state_changes` every `idlePollMs` (the local engine: its change
   * streams re-scan the oplog on every poll). The lease protocol is the same.
   */
  mode?: 'change-stream' | 'poll';
  /** Whether the database is missing now (core/engines.ts): trust lost then keeps the caches (`servesThroughOutage`). */
  databaseMissing?: () => boolean;
  /** Told, in seconds, how long after its write each change was applied here (the lag metric). */
  observeLag?: (seconds: number) => void;
}

interface ChangeDoc {
  _id: ObjectId;
  topics: string[];
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

/** How many applied changes `changedSince` remembers; a load spanning more is not kept. */
const RECENT_CHANGES = 4096;
/**
 * How far before its previous read a poll reads again: a writer's clock up to the allowed skew
 * behind, and an insert still in flight. A change written before that (a slower insert, a clock
 * further behind) is the next renewal's, every `leaseMs / 4`. Every poll reads each row of its window
 * (the rows this session acknowledged are matched out, not skipped by an index): under a burst of
 * writes, a 10 s window here and the whole two minutes at every renewal were about a third of the
 * local engine's work (bench/RESULTS.md, sessions 18 and 19).
 */
const pollOverlapMs = (skewMs: number) => Math.max(2000, 2 * skewMs);
/**
 * How far before its previous renewal's read a renewal reads again (a change the poll missed); every
 * so often (`fullCatchUpEveryMs`) it reads the whole two minutes instead, for a change stamped long
 * before it landed (its writer frozen in between). The whole two minutes at every renewal (every
 * 1.25 s by default) cost the engine as much again as the polls.
 */
const RENEWAL_OVERLAP_MS = 30_000;
/** How long a writer waits for the acknowledgements of its change before it gives up (`publish`): 16 s by default. */
const writerPatienceMs = (leaseMs: number, skewMs: number) => 2 * leaseMs + skewMs + 5000;
/** Within half a writer's patience: 8 s by default. */
const fullCatchUpEveryMs = (leaseMs: number, skewMs: number) => Math.min(10_000, writerPatienceMs(leaseMs, skewMs) / 2);
/** How often a gateway deletes changes nobody can still need (the local engine has no TTL indexes). */
const PURGE_EVERY_MS = 30_000;

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
  let open = false;
  const mode = options.mode ?? 'poll';
  let session: string | null = null;
  /** The session that started the caches empty (at its start, or at its first read after an outage). */
  let emptiedFor: string | null = null;
  let sessionCount = 0;
  let trustUntil = 0;
  let epoch = 0;
  let trustLostAt = 0;
  // The topics of the last RECENT_CHANGES changes applied, slot = epoch % RECENT_CHANGES.
  const recent: (string | undefined)[] = new Array<string | undefined>(RECENT_CHANGES);
  let pausedUntil = 0;
  let purgedAt = 0;
  let loop: Promise<void> | null = null;

  // Announcements (freshness, nobody waits for acknowledgements) share rows: those made while one
  // is being written go together, each topic once, in the next, which starts when it lands. Each
  // caller still resolves once a row naming its topics and written after its call has landed; a
  // burst of writes (8 clients growing a workspace: 4 to 7 a grown entry) costs a row per round trip.
  const unannounced = new Set<string>();
  let announcing: Promise<void> | null = null;
  let nextAnnouncement: Promise<void> | null = null;
  // Topics riding with the next row (`announceWithin`), and the timer that writes one for them.
  let riderDeadline: NodeJS.Timeout | null = null;
  const writeAnnouncement = (): Promise<void> => {
    if (riderDeadline) clearTimeout(riderDeadline);
    riderDeadline = null;
    const named = [...unannounced];
    unannounced.clear();
    const written = changes.insertOne({ _id: new ObjectId(), topics: named, at: new Date(), acked: [] }).then(() => undefined);
    announcing = written.finally(() => {
      announcing = null;
    });
    return announcing;
  };

  const announce = (named: string | readonly string[]): Promise<void> => {
    for (const topic of [named].flat()) unannounced.add(topic);
    if (!announcing) return writeAnnouncement();
    nextAnnouncement ??= announcing
      .catch(() => undefined)
      .then(() => {
        nextAnnouncement = null;
        return writeAnnouncement();
      });
    return nextAnnouncement;
  };

  const notify = (topic: string | null) => {
    epoch++;
    if (topic === null) trustLostAt = epoch;
    else recent[epoch % RECENT_CHANGES] = topic;
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
    // Lost to a database outage: the caches stay for the public lane (`servesThroughOutage`); a
    // load in flight is still not kept. The feed's next session starts them empty.
    if (options.databaseMissing?.()) trustLostAt = ++epoch;
    else notify(null);
    if (was) {
      log.warn({ reason, session: was }, 'state feed down: per-request reads until it is back');
      await gateways.updateOne({ _id: was }, { $set: { leaseUntil: new Date(0) } }).catch(() => undefined);
    }
  }

  /**
   * Drops what the changes invalidate (each topic once, however many changes name it), then
   * acknowledges them all in one statement: a backlog of thousands (a burst of provisioning) costs
   * one write, not one per change.
   */
  async function apply(docs: readonly Pick<ChangeDoc, '_id' | 'topics' | 'at'>[], mine: string) {
    if (docs.length === 0) return;
    if (options.observeLag) {
      const now = Date.now();
      for (const doc of docs) if (doc.at) options.observeLag(Math.max(0, now - doc.at.getTime()) / 1000);
    }
    // A change written before changes named several topics carries none: drop everything.
    if (docs.some((doc) => !Array.isArray(doc.topics))) notify(null);
    for (const topic of new Set(docs.flatMap((doc) => doc.topics ?? []))) notify(topic);
    await changes.updateMany({ _id: { $in: docs.map((doc) => doc._id) } }, { $addToSet: { acked: mine } });
  }

  /** Applies every recent change this session has not acknowledged (the poll, and the renewal's check). */
  async function catchUp(mine: string, since: Date) {
    const from = new Date(Math.max(since.getTime(), Date.now() - 120_000));
    const docs = await changes.find({ at: { $gt: from }, acked: { $ne: mine } }, { projection: { topics: 1, at: 1 } }).toArray();
    // A session opened during a database outage kept the caches (`servesThroughOutage`) until
    // here, its first read: from now on changes can be written again, so they start empty.
    if (emptiedFor !== mine) {
      emptiedFor = mine;
      notify(null);
    }
    await apply(docs, mine);
  }

  /**
   * Catch up, then grow the lease if nobody evicted this session meanwhile. The catch-up reads
   * every recent change this session has not acknowledged and applies it, so when the lease grows
   * every change committed before the renewal started has been applied, even one the stream lost
   * (the stream is the fast path; writers never wait longer than one renewal period for it).
   */
  async function renew(mine: string, since: Date, first: boolean): Promise<string | null> {
    const startedMono = performance.now();
    const leaseUntil = new Date(Date.now() + leaseMs);
    await catchUp(mine, since);
    if (first) {
      await gateways.insertOne({ _id: mine, leaseUntil, evicted: false, pid: process.pid, startedAt: new Date() });
    } else {
      const renewed = await gateways.updateOne({ _id: mine, evicted: false }, { $set: { leaseUntil } });
      if (renewed.matchedCount === 0) return 'evicted by a writer (lease lapsed)';
    }
    if (session === mine) trustUntil = startedMono + leaseMs;
    return null;
  }

  async function runSession() {
    const mine = `${processId}-${++sessionCount}`;
    // Changes from a little before the feed opened are re-applied by the first catch-up
    // (harmless: they only drop entries), whatever the clocks of the writers say.
    const since = new Date(Date.now() - 60_000);
    const opened = mode === 'change-stream' ? changes.watch<ChangeDoc>([{ $match: { operationType: 'insert' } }], { maxAwaitTimeMS: 1000 }) : null;
    stream = opened;
    try {
      // The aggregate runs here: every change committed from now on will come through.
      let pending = opened ? await opened.tryNext() : null;
      session = mine;
      open = true;
      // Anything cached before the feed opened may have missed a change: start empty (during a
      // database outage at the session's first read instead, `catchUp`).
      if (!options.databaseMissing?.()) {
        emptiedFor = mine;
        notify(null);
      }
      const reader = (async () => {
        let polledAt = 0;
        while (running && session === mine) {
          if (!opened) {
            await sleep(idlePollMs);
            // The fast path reads back only a little before its previous read; the renewal further.
            const startedAt = Date.now();
            await catchUp(mine, new Date(Math.max(since.getTime(), polledAt - pollOverlapMs(skewMs))));
            polledAt = startedAt;
            continue;
          }
          if (pending) {
            if (pending.operationType === 'insert') await apply([pending.fullDocument], mine);
            pending = null;
          }
          pending = await opened.tryNext();
          if (!pending) await sleep(idlePollMs);
        }
      })();
      const ended = reader.then(
        () => 'stream ended',
        (error: unknown) => `stream failed: ${(error as Error)?.message}`,
      );
      let first = true;
      let failure: string | null = null;
      let renewedAt = 0;
      let fullAt = Date.now();
      while (running && session === mine && !failure) {
        const startedAt = Date.now();
        const full = startedAt - fullAt >= fullCatchUpEveryMs(leaseMs, skewMs);
        const from = full ? since : new Date(Math.max(since.getTime(), renewedAt - RENEWAL_OVERLAP_MS));
        failure = await Promise.race([renew(mine, from, first).catch((error: unknown) => `renewal failed: ${(error as Error)?.message}`), ended]);
        if (!failure) {
          renewedAt = startedAt;
          if (full) fullAt = startedAt;
        }
        first = false;
        if (Date.now() - purgedAt > PURGE_EVERY_MS) void purge();
        if (!failure) failure = await Promise.race([sleep(leaseMs / 4).then(() => null), ended]);
      }
      if (session === mine) await loseTrust(failure ?? 'stopped');
      await opened?.close().catch(() => undefined);
      await ended;
    } finally {
      if (session === mine) await loseTrust('feed lost');
      stream = null;
      open = false;
      await opened?.close().catch(() => undefined);
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

  /**
   * Drops changes and gateway rows nobody needs any more. A change is read by catch-ups for 120 s
   * and waited on by its writer for at most 2 leases + skew + 5 s; it is kept well past both. The
   * poll scans the collection on an engine without secondary indexes, so it is kept small.
   */
  async function purge() {
    purgedAt = Date.now();
    const before = new Date(Date.now() - Math.max(180_000, writerPatienceMs(leaseMs, skewMs) + 60_000));
    try {
      await changes.deleteMany({ at: { $lt: before } });
      await gateways.deleteMany({ leaseUntil: { $lt: before } });
    } catch (error) {
      log.warn({ err: error }, 'state feed purge failed');
    }
  }

  return {
    trusted: () => session !== null && performance.now() < trustUntil,
    servesThroughOutage: () => (session !== null && performance.now() < trustUntil) || options.databaseMissing?.() === true,
    epoch: () => epoch,
    changedSince(since, topicsOfValue) {
      if (trustLostAt > since || epoch - since >= RECENT_CHANGES) return true;
      for (let at = since + 1; at <= epoch; at++) {
        const topic = recent[at % RECENT_CHANGES];
        if (topic !== undefined && topicsOfValue.includes(topic)) return true;
      }
      return false;
    },
    subscribe(listener) {
      listeners.push(listener);
    },

    async publish(named) {
      const topic = [named].flat().join(' ');
      const change = await changes.insertOne({ _id: new ObjectId(), topics: [named].flat(), at: new Date(), acked: [] });
      let delay = 2;
      const giveUp = Date.now() + writerPatienceMs(leaseMs, skewMs);
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

    announce,

    announceWithin(named, withinMs) {
      for (const topic of [named].flat()) unannounced.add(topic);
      riderDeadline ??= setTimeout(() => {
        riderDeadline = null;
        announce([]).catch((error: unknown) => log.warn({ err: error }, 'announcing a state change failed'));
      }, withinMs);
    },

    async start() {
      if (running) return;
      running = true;
      await purge();
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
      open = false;
      void stream?.close().catch(() => undefined);
    },

    status: () => ({
      session,
      streamOpen: open,
      trustedForMs: Math.max(0, Math.round(trustUntil - performance.now())),
    }),
  };
}
