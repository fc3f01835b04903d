import { MongoNetworkError, MongoServerSelectionError, type MongoClient, type TopologyDescriptionChangedEvent } from 'mongodb';
import { defaultGrpcRetryOptions, isGrpcServiceError, makeGrpcRetryInterceptor, ServiceError, type ConnectionOptions } from '@temporalio/client';
import { connect } from 'node:net';
import type { Logger } from 'pino';
import { EngineUnavailableError } from './errors.ts';

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
export function temporalCalls(waitMs: number, missing: () => boolean): GrpcInterceptor {
  const backoff = defaultGrpcRetryOptions();
  return (options, nextCall) => {
    const method = options.method_definition.path.slice(options.method_definition.path.lastIndexOf('/') + 1);
    const own = options.deadline !== undefined || WAITING_CALLS.has(method);
    const deadline = own ? options.deadline : Date.now() + (missing() ? 0 : waitMs);
    const endsAt = deadline === undefined ? Infinity : deadline instanceof Date ? deadline.getTime() : deadline;
    let delay = 0;
    const retrying = makeGrpcRetryInterceptor({
      retryableDecider(attempt, status) {
        delay = backoff.delayFunction(attempt, status);
        return backoff.retryableDecider(attempt, status) && Date.now() + delay < endsAt;
      },
      delayFunction: () => delay,
    });
    return retrying({ ...options, deadline }, nextCall);
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

/** Which engine an error says is unreachable, if it says so. */
export function unreachableEngine(error: unknown): Engine | null {
  if (error instanceof EngineUnavailableError) return error.engine;
  // Server selection gave up, or a connection broke or could not be made (PoolClearedError is one).
  if (error instanceof MongoServerSelectionError || error instanceof MongoNetworkError) return 'database';
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
 * What this process knows of its engines (docs/production.md, "Degrade, never hang"). MongoDB's
 * state is the driver's own: its topology has a writable server or not (a failed command marks the
 * server unknown at once; its monitor finds it back). Temporal's: whether its port refuses
 * connections, looked at every 5 s, every second while missing, and at once when a call failed
 * unreachable. `bounded` holds a request's wait for a missing database to ENGINE_WAIT_MS.
 */
export interface EngineWatch {
  state(engine: Engine): EngineState;
  /** The engines this process finds missing now. */
  missing(): Engine[];
  /**
   * What `/healthz` says, without asking the engines (a probe never waits on one): `degraded` and
   * which engine is missing. The process is alive either way; the requests that need a missing
   * engine answer 503.
   */
  report(): { status: 'ok' | 'degraded'; engines: Record<Engine, 'up' | 'down'>; missing: Engine[] };
  /**
   * Runs `work`, which may need the database: while it is missing the work is cut (503) once
   * ENGINE_WAIT_MS passed since `since` (the request's arrival) or since it went missing, whichever
   * is later, even when the handler goes on trying (each command is bounded by the driver's server
   * selection, a handler may run several). Temporal needs no cut: each call has its deadline.
   */
  bounded<T>(work: () => Promise<T>, since?: number): Promise<T>;
  /** An engine's failure as the 503 that says so (Temporal then marked missing); anything else unchanged. */
  classify(error: unknown): unknown;
  /** Subscribes to state changes (metrics). */
  onChange(listener: (engine: Engine, up: boolean) => void): void;
  stop(): void;
}

interface WatchOptions {
  mongo: MongoClient;
  /** Temporal's `host:port`. */
  temporalAddress: string;
  waitMs: number;
  log: Logger;
  /** How often Temporal is probed while it is up; while an engine is down it is probed every second. */
  probeMs?: number;
}

const DOWN_PROBE_MS = 1000;

export function createEngineWatch({ mongo, temporalAddress, waitMs, log, probeMs = 5000 }: WatchOptions): EngineWatch {
  const states: Record<Engine, EngineState> = { database: { up: true, since: Date.now() }, temporal: { up: true, since: Date.now() } };
  const listeners: ((engine: Engine, up: boolean) => void)[] = [];
  // Requests running inside `bounded`: told when the database goes missing.
  const waiting = new Set<() => void>();
  const timers: Partial<Record<Engine, NodeJS.Timeout>> = {};
  let stopped = false;

  const set = (engine: Engine, up: boolean) => {
    const state = states[engine];
    if (state.up === up) return;
    states[engine] = { up, since: Date.now() };
    if (up) log.warn({ engine }, 'engine back');
    else log.warn({ engine }, 'engine missing');
    for (const listener of listeners) listener(engine, up);
    if (engine === 'database' && !up) for (const tell of waiting) tell();
    schedule(engine);
  };

  // While MongoDB is missing a ping waits in server selection, which makes the driver's monitor
  // check every 500 ms: the topology event then says it is back. Temporal: does its port refuse?
  const probes: Record<Engine, () => Promise<boolean>> = {
    database: () =>
      mongo
        .db('admin')
        .command({ ping: 1 })
        .then(
          () => true,
          (error: unknown) => unreachableEngine(error) !== 'database',
        ),
    temporal: async () => !(await refused(temporalAddress, Math.min(waitMs, 2000))),
  };
  const schedule = (engine: Engine) => {
    clearTimeout(timers[engine]);
    if (stopped || (engine === 'database' && states.database.up)) return;
    const timer = setTimeout(
      () => {
        probes[engine]()
          .then((up) => set(engine, up))
          .finally(() => schedule(engine));
      },
      states[engine].up ? probeMs : DOWN_PROBE_MS,
    );
    timer.unref();
    timers[engine] = timer;
  };

  const topology = (event: TopologyDescriptionChangedEvent) =>
    set(
      'database',
      [...event.newDescription.servers.values()].some((server) => server.isWritable),
    );
  mongo.on('topologyDescriptionChanged', topology);
  schedule('temporal');

  return {
    state: (engine) => states[engine],
    missing: () => ENGINES.filter((engine) => !states[engine].up),
    report() {
      const missing = ENGINES.filter((engine) => !states[engine].up);
      const engines = { database: states.database.up ? 'up' : 'down', temporal: states.temporal.up ? 'up' : 'down' } as const;
      return { status: missing.length === 0 ? 'ok' : 'degraded', engines, missing };
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
      if (engine === 'temporal') void probes.temporal().then((up) => set('temporal', up));
      return new EngineUnavailableError(engine, waitMs);
    },
    bounded(work, since) {
      const started = since ?? Date.now();
      return new Promise((resolve, reject) => {
        let timer: NodeJS.Timeout | undefined;
        const cut = () => {
          if (timer) return;
          // The wait is counted from when the database went missing, or from the start if it already was.
          const at = Math.max(started, states.database.since) + waitMs;
          timer = setTimeout(() => reject(new EngineUnavailableError('database', waitMs)), Math.max(0, at - Date.now()));
        };
        if (!states.database.up) cut();
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
      mongo.off('topologyDescriptionChanged', topology);
      for (const engine of ENGINES) clearTimeout(timers[engine]);
    },
  };
}
