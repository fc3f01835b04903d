import { MongoBulkWriteError, MongoNetworkError, MongoServerSelectionError, type MongoClient, type TopologyDescriptionChangedEvent } from 'mongodb';
import {
  defaultGrpcRetryOptions,
  isGrpcServiceError,
  makeGrpcRetryInterceptor,
  ServiceError,
  type Connection,
  type ConnectionOptions,
} from '@temporalio/client';
import { connect } from 'node:net';
import type { Logger } from 'pino';
import { EngineUnavailableError } from './errors.ts';
import { StorageHolds } from './storage-holds.ts';
import { DEFAULT_CLUSTER, type ClusterPool } from './clusters.ts';

/** The engines a request can need: MongoDB and Temporal. */
export type Engine = 'database' | 'temporal';
export const ENGINES: readonly Engine[] = ['database', 'temporal'];

/** gRPC status codes (`@grpc/grpc-js` `status`) that say the Temporal server could not be reached in time. */
const GRPC_DEADLINE_EXCEEDED = 4;
const GRPC_UNAVAILABLE = 14;

/**
 * Temporal calls that wait on purpose (a workflow's result, an update's outcome, a query run by a
 * worker): they keep the deadline their caller sets. Every other call is answered by the server
 * itself, so a bound of ENGINE_WAIT_MS only cuts a server that does not answer.
 */
const WAITING_CALLS = new Set(['GetWorkflowExecutionHistory', 'UpdateWorkflowExecution', 'PollWorkflowExecutionUpdate', 'QueryWorkflow']);

type GrpcInterceptor = NonNullable<ConnectionOptions['interceptors']>[number];

/**
 * The gRPC interceptor of every Temporal call: it gives a call without a deadline of its own one
 * of `waitMs`, and retries what the server answered as passing (the client's default backoff),
 * but never past the deadline: the stock retry interceptor sleeps its backoff (up to 2.4 s by the
 * sixth attempt) even when the deadline falls in the middle, so a call to a missing server took
 * ENGINE_WAIT_MS and that much more. While the watch knows Temporal is missing (`missing()`), such
 * a call fails at once: its probe (which sets its own deadline) says when it is back.
 */
export interface TemporalCalls {
  readonly interceptor: GrpcInterceptor;
  /**
   * Before the connection closes: no call is retried any more, and the retries already waiting on
   * their backoff are waited out (at most `waitMs`). A retry whose timer fires after the close
   * meets a shut channel and throws where no caller can catch it (an uncaught exception).
   */
  settle(): Promise<void>;
}

export function temporalCalls(waitMs: number, missing: () => boolean): TemporalCalls {
  const backoff = defaultGrpcRetryOptions();
  let closing = false;
  let lastRetryAt = 0;
  const interceptor: GrpcInterceptor = (options, nextCall) => {
    const method = options.method_definition.path.slice(options.method_definition.path.lastIndexOf('/') + 1);
    const own = options.deadline !== undefined || WAITING_CALLS.has(method);
    const deadline = own ? options.deadline : Date.now() + (missing() ? 0 : waitMs);
    const endsAt = deadline === undefined ? Infinity : deadline instanceof Date ? deadline.getTime() : deadline;
    let delay = 0;
    const retrying = makeGrpcRetryInterceptor({
      retryableDecider(attempt, status) {
        delay = backoff.delayFunction(attempt, status);
        const retry = !closing && backoff.retryableDecider(attempt, status) && Date.now() + delay < endsAt;
        if (retry) lastRetryAt = Math.max(lastRetryAt, Date.now() + delay);
        return retry;
      },
      delayFunction: () => delay,
    });
    return retrying({ ...options, deadline }, nextCall);
  };
  return {
    interceptor,
    async settle() {
      closing = true;
      const wait = Math.min(lastRetryAt - Date.now(), waitMs);
      // A little past the timer: the retried call is made on the open channel, then answered.
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait + 100));
    },
  };
}

/** Runs Temporal calls under a deadline (epoch ms) or an abort signal: `services.temporal.bounded`. */
export type BoundedTemporalCalls = <T>(limit: number | AbortSignal, calls: () => Promise<T>) => Promise<T>;

/**
 * The connection's `withDeadline` / `withAbortSignal`, with its call context (an AsyncLocalStorage)
 * disabled again once no such run is open (`StorageHolds` says why): the engine watch's Temporal
 * check, every 5 s, had left it enabled for the life of every process, and every request through
 * the full path paid its hook. The deadline is read when a call starts, so a call already sent keeps it.
 */
export function boundedTemporalCalls(connection: Connection): BoundedTemporalCalls {
  const holds = new StorageHolds(() => connection.callContextStorage.disable());
  return async (limit, calls) => {
    const release = holds.hold();
    try {
      return await (typeof limit === 'number' ? connection.withDeadline(limit, calls) : connection.withAbortSignal(limit, calls));
    } finally {
      release();
    }
  };
}

/**
 * Whether nothing listens at Temporal's address (the connection is refused): it is missing. A call
 * that timed out says nothing of the others (a loaded server is slow, not gone), so Temporal is
 * marked missing, and its calls fail at once, only on this evidence.
 */
function refused(address: string, timeoutMs: number): Promise<boolean> {
  const at = address.lastIndexOf(':');
  return new Promise((resolve) => {
    const socket = connect({ host: address.slice(0, at), port: Number(address.slice(at + 1)) });
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(false));
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED' || error.code === 'ECONNRESET'));
  });
}

/**
 * A socket the peer ended or reset, as Node reports it. The MongoDB driver (6.22) passes one through
 * unwrapped when a command's write meets a socket the server has just closed (it awaits the socket's
 * `drain`, which rejects with the socket's own EPIPE). The gateway's requests open no other sockets
 * of their own (webhooks go out from the worker, mail through its outbox), so in a request such an
 * error is the database's.
 */
const BROKEN_SOCKET = new Set(['EPIPE', 'ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED']);

/** Which engine an error says is unreachable, if it says so. */
export function unreachableEngine(error: unknown): Engine | null {
  if (error instanceof EngineUnavailableError) return error.engine;
  if (error instanceof Error && BROKEN_SOCKET.has((error as NodeJS.ErrnoException).code ?? '')) return 'database';
  // Server selection gave up, or a connection broke or could not be made (PoolClearedError is one).
  if (error instanceof MongoServerSelectionError || error instanceof MongoNetworkError) return 'database';
  // A bulk write (insertMany, bulkWrite) wraps a broken connection in a MongoBulkWriteError, a
  // server error by its class, and keeps what broke as `errorResponse`.
  if (error instanceof MongoBulkWriteError && error.errorResponse instanceof Error) return unreachableEngine(error.errorResponse);
  const grpc = error instanceof ServiceError ? error.cause : error;
  if (isGrpcServiceError(grpc) && (grpc.code === GRPC_UNAVAILABLE || grpc.code === GRPC_DEADLINE_EXCEEDED)) return 'temporal';
  return null;
}

export interface EngineState {
  up: boolean;
  /** Since when it is in this state (epoch ms). */
  since: number;
}

/**
 * What `/healthz` and `/readyz` say, read from the watch (no engine is asked): `engines.database`
 * is the default cluster's (it holds the platform database), `clusters` every cluster's by label,
 * and `missing` names what is down: `database`, `temporal`, `database:<label>` for another cluster.
 */
export interface EngineReport {
  status: 'ok' | 'degraded';
  engines: Record<Engine, 'up' | 'down'>;
  clusters: Record<string, 'up' | 'down'>;
  missing: string[];
}

/**
 * What this process knows of its engines (docs/production.md, "Degrade, never hang"). Whether each
 * is reachable: a database's (one per cluster) is the driver's own, its topology has a writable
 * server or not (a failed command marks the server unknown at once; its monitor finds it back);
 * Temporal's, whether its port refuses connections (also looked at at once when a call failed
 * unreachable). Whether each is healthy, for the probes and the gauge: reachable, and its last
 * check (a ping; Temporal's system info) answered within 2 s: checked every 5 s, every second
 * while it is not. `bounded` holds a request's wait for a missing database to ENGINE_WAIT_MS.
 */
export interface EngineWatch {
  /** `database`: the default cluster's; `temporal`: refused or not (what makes its calls fail at once). */
  state(engine: Engine): EngineState;
  /** One cluster's database (`default` is `state('database')`); a label not watched is up. */
  cluster(label: string): EngineState;
  /** The engines this process finds missing now (the default cluster for `database`; Temporal when it refuses). */
  missing(): Engine[];
  /**
   * What `/healthz` and `/readyz` say, without asking the engines (a probe never waits on one).
   * Temporal is down here also while it hangs (its last check did not answer within 2 s), though
   * only a refused connection makes its calls fail at once. The process is alive either way; the
   * requests that need a missing engine answer 503.
   */
  report(): EngineReport;
  /**
   * Runs `work`, which may need the database: while it is missing the work is cut (503) once
   * ENGINE_WAIT_MS passed since `since` (the request's arrival) or since it went missing, whichever
   * is later, even when the handler goes on trying (each command is bounded by the driver's server
   * selection, a handler may run several). Temporal needs no cut: each call has its deadline.
   */
  bounded<T>(work: () => Promise<T>, since?: number): Promise<T>;
  /** An engine's failure as the 503 that says so (Temporal then marked missing); anything else unchanged. */
  classify(error: unknown): unknown;
  /** Subscribes to state changes (metrics): `cluster` is the database's label, null for Temporal. */
  onChange(listener: (engine: Engine, up: boolean, cluster: string | null) => void): void;
  stop(): void;
}

interface WatchOptions {
  mongo: MongoClient;
  /** Every cluster's client (MONGODB_CLUSTERS), each watched like `mongo`, the default one. */
  clusters?: ClusterPool;
  /** Temporal's `host:port`. */
  temporalAddress: string;
  /** A call Temporal answers when it is well (its system info), with the deadline the watch gives it. */
  temporalAnswers?: (deadline: number) => Promise<unknown>;
  waitMs: number;
  log: Logger;
  /** How often each engine is checked while healthy; while it is not, every second. */
  probeMs?: number;
}

const DOWN_PROBE_MS = 1000;
/** Temporal's key beside the clusters' labels (a label holds no colon). */
const TEMPORAL = ':temporal';
/** How long a health check waits for an engine's answer: /health's bound. */
const CHECK_MS = 2000;

/** Whether `check` answered within `ms`; null when it did not answer in time (it may still be running). */
function within(check: () => Promise<boolean>, ms: number): Promise<boolean | null> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), ms);
    timer.unref();
    check().then(
      (answer) => (clearTimeout(timer), resolve(answer)),
      () => (clearTimeout(timer), resolve(false)),
    );
  });
}

export function createEngineWatch({ mongo, clusters, temporalAddress, temporalAnswers, waitMs, log, probeMs = 5000 }: WatchOptions): EngineWatch {
  const now = Date.now();
  // Reachability (what `missing` and `bounded` act on): each database by its cluster's label, and
  // Temporal (refused or not). Health (what the report and the gauge say): reachable, and the last
  // check answered in time.
  const clients = new Map<string, MongoClient>([[DEFAULT_CLUSTER, mongo]]);
  for (const { label } of clusters?.clusters ?? []) if (label !== DEFAULT_CLUSTER) clients.set(label, clusters!.client(label));
  const keys = [...clients.keys(), TEMPORAL];
  const reach = new Map<string, EngineState>(keys.map((key) => [key, { up: true, since: now }]));
  const answering = new Map<string, boolean>();
  const healthy = new Map<string, boolean>(keys.map((key) => [key, true]));
  const listeners: ((engine: Engine, up: boolean, cluster: string | null) => void)[] = [];
  // Requests running inside `bounded`: told when the default database goes missing.
  const waiting = new Set<() => void>();
  const timers = new Map<string, NodeJS.Timeout>();
  const checking = new Set<string>();
  let stopped = false;

  const tell = (key: string) => {
    const up = reach.get(key)!.up && (answering.get(key) ?? true);
    if (healthy.get(key) === up) return;
    healthy.set(key, up);
    for (const listener of listeners) listener(key === TEMPORAL ? 'temporal' : 'database', up, key === TEMPORAL ? null : key);
  };
  const setReach = (key: string, up: boolean) => {
    if (reach.get(key)!.up === up) return;
    reach.set(key, { up, since: Date.now() });
    // Back: what an earlier check found no longer holds (the next one says whether it answers).
    if (up) answering.delete(key);
    const fields = key === TEMPORAL ? { engine: 'temporal' } : { engine: 'database', cluster: key };
    if (up) log.warn(fields, 'engine back');
    else log.warn(fields, 'engine missing');
    if (key === DEFAULT_CLUSTER && !up) for (const notify of waiting) notify();
    tell(key);
    schedule(key, up ? probeMs : DOWN_PROBE_MS);
  };

  // One check an engine: answers whether it is reachable, or null when it did not answer in time.
  // A database's ping, while it is missing, waits in server selection, which makes the driver's
  // monitor check every 500 ms (the topology event then says it is back). Temporal: does its port
  // refuse? If not, does it answer a call in time?
  const checks = new Map<string, () => Promise<boolean | null>>();
  for (const [label, client] of clients) {
    const ping = () =>
      client
        .db('admin')
        .command({ ping: 1 })
        .then(
          () => true,
          (error: unknown) => unreachableEngine(error) !== 'database',
        );
    checks.set(label, () => within(ping, CHECK_MS));
  }
  checks.set(TEMPORAL, async () => {
    if (await refused(temporalAddress, Math.min(waitMs, CHECK_MS))) return false;
    if (!temporalAnswers) return true;
    const answered = await within(() => temporalAnswers(Date.now() + CHECK_MS).then(() => true), CHECK_MS + 500);
    // A call that did not answer says Temporal hangs, not that it is gone: reachable, not answering.
    return answered === true ? true : null;
  });
  const check = async (key: string) => {
    // A check still waiting on a hanging engine is not doubled.
    if (checking.has(key)) return;
    checking.add(key);
    try {
      const answer = await checks.get(key)!();
      if (stopped) return;
      if (answer !== null) setReach(key, answer);
      answering.set(key, answer !== null);
      tell(key);
    } finally {
      checking.delete(key);
    }
  };
  function schedule(key: string, ms: number) {
    clearTimeout(timers.get(key));
    if (stopped) return;
    const timer = setTimeout(() => void check(key).finally(() => schedule(key, healthy.get(key) ? probeMs : DOWN_PROBE_MS)), ms);
    timer.unref();
    timers.set(key, timer);
  }

  const watchers = [...clients].map(([label, client]) => {
    const topology = (event: TopologyDescriptionChangedEvent) =>
      setReach(
        label,
        [...event.newDescription.servers.values()].some((server) => server.isWritable),
      );
    client.on('topologyDescriptionChanged', topology);
    return () => client.off('topologyDescriptionChanged', topology);
  });
  // The first checks at once: another cluster's client connects with its first ping (its monitor
  // follows it from then on), and Temporal is known before the first probe asks.
  for (const key of checks.keys()) schedule(key, 0);

  const defaultDatabase = () => reach.get(DEFAULT_CLUSTER)!;
  const state = (engine: Engine) => reach.get(engine === 'database' ? DEFAULT_CLUSTER : TEMPORAL)!;
  const health = (key: string) => (healthy.get(key) === false ? ('down' as const) : ('up' as const));
  return {
    state,
    cluster: (label) => reach.get(label) ?? { up: true, since: now },
    missing: () => ENGINES.filter((engine) => !state(engine).up),
    report() {
      const engines = { database: health(DEFAULT_CLUSTER), temporal: health(TEMPORAL) };
      const byCluster = Object.fromEntries([...clients.keys()].map((label) => [label, health(label)]));
      const missing: string[] = ENGINES.filter((engine) => engines[engine] === 'down');
      for (const [label, health] of Object.entries(byCluster)) if (label !== DEFAULT_CLUSTER && health === 'down') missing.push(`database:${label}`);
      return { status: missing.length === 0 ? 'ok' : 'degraded', engines, clusters: byCluster, missing };
    },
    onChange(listener) {
      listeners.push(listener);
    },
    classify(error) {
      if (error instanceof EngineUnavailableError) return error;
      const engine = unreachableEngine(error);
      if (engine === null) return error;
      // MongoDB's state is the driver's topology (a failed command already updated it); a late
      // failure must not mark a database that is back as missing again.
      if (engine === 'temporal') void refused(temporalAddress, Math.min(waitMs, CHECK_MS)).then((no) => setReach(TEMPORAL, !no));
      return new EngineUnavailableError(engine, waitMs);
    },
    bounded(work, since) {
      const started = since ?? Date.now();
      return new Promise((resolve, reject) => {
        let timer: NodeJS.Timeout | undefined;
        const cut = () => {
          if (timer) return;
          // The wait is counted from when the database went missing, or from the start if it already was.
          const at = Math.max(started, defaultDatabase().since) + waitMs;
          timer = setTimeout(() => reject(new EngineUnavailableError('database', waitMs)), Math.max(0, at - Date.now()));
        };
        if (!defaultDatabase().up) cut();
        waiting.add(cut);
        work()
          .then(resolve, reject)
          .finally(() => {
            waiting.delete(cut);
            clearTimeout(timer);
          });
      });
    },
    stop() {
      stopped = true;
      for (const unwatch of watchers) unwatch();
      for (const timer of timers.values()) clearTimeout(timer);
    },
  };
}
