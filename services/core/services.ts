import { MongoClient, type Db } from 'mongodb';
import { Client, Connection } from '@temporalio/client';
import pino, { type Logger } from 'pino';
import type { Config } from './config.ts';
import type { CoreServices, EventPublisher } from './context.ts';
import { systemClock, type Clock } from './clock.ts';
import { createCursorCodec } from './cursors.ts';
import { loggerOptions } from './logger.ts';
import { createHooks } from './hooks.ts';
import { createChangeFeed } from './change-feed.ts';
import { createWriteWatch } from './write-watch.ts';
import { createPublicGeneration, type PublicCollection } from './public-generation.ts';
import { createFirstWriteSetup } from './first-write.ts';
import { createSiteStateMoves } from './site-state.ts';
import { createSiteConfigViews, isSiteConfigKind, SITE_CONFIG_COLLECTION } from './site-config.ts';
import type { IndexSpec } from './feature.ts';
import { createMetrics } from './metrics.ts';
import { createTracing, type ProcessRole } from './tracing.ts';
import { traceMongoCommands } from './mongo-tracing.ts';
import { workflowClientTracing } from './temporal-tracing.ts';
import { boundedTemporalCalls, createEngineWatch, temporalCalls, unreachableEngine, type Engine, type EngineWatch } from './engines.ts';
import { createClusterPool } from './clusters.ts';
import { createPlacement } from './placement.ts';

/** Until the events feature is wired in, events go nowhere (but are still logged at debug level). */
const silentPublisher = (log: Logger): EventPublisher => ({
  async publish(_ctx, event) {
    log.debug({ event }, 'event published without subscribers');
  },
});

export interface CoreServiceOptions {
  /** The process these services run in (names its traces); the gateway unless the worker says so. */
  role?: ProcessRole;
  clock?: Clock;
  log?: Logger;
  /** Emit the driver's command events (benchmarks and tests count database commands with them). */
  monitorCommands?: boolean;
  /** Collections whose writes move their database's generation (`core/write-watch.ts`): what held reads depend on. */
  watchedCollections?: ReadonlySet<string>;
  /** Collections the Public API reads: a write to one moves its site's public generation (`core/public-generation.ts`). */
  publicCollections?: readonly PublicCollection[];
  /** Every feature's workspace indexes: made on a collection's first write (`core/first-write.ts`). */
  workspaceIndexes?: readonly IndexSpec[];
}

/**
 * Builds the process-wide dependencies: one MongoClient and one Temporal connection per process
 * (never one per request). Temporal connects lazily so a gateway can answer while Temporal is down.
 */
export async function createServices(config: Config, options: CoreServiceOptions = {}): Promise<CoreServices> {
  const tracing = createTracing(config, options.role ?? 'gateway');
  const log = options.log ?? pino(loggerOptions(config.LOG_LEVEL, tracing.enabled));
  const mongo = new MongoClient(config.MONGODB_URI, {
    maxPoolSize: 50,
    // A missing server is waited for this long, then the command fails (503). Not `timeoutMS`: it
    // would also cut long commands of a healthy server, and it is deprecated from driver 7.8. Nor a
    // shorter `connectTimeoutMS`: a killed server refuses at once, and the monitor's checks of a
    // slow one (a loaded host) would time out and clear the pool.
    serverSelectionTimeoutMS: config.ENGINE_WAIT_MS,
    monitorCommands: options.monitorCommands ?? false,
  });
  if (tracing.enabled && !traceMongoCommands(tracing.tracer)) log.warn('the MongoDB driver has no Connection.command to trace: traces hold no MongoDB spans');
  // A process starting while the engine is slow to accept (or restarting) waits up to 30 s for it.
  const connectBy = Date.now() + 30_000;
  for (;;) {
    try {
      await mongo.connect();
      break;
    } catch (error) {
      if (Date.now() > connectBy || unreachableEngine(error) !== 'database') throw error;
    }
  }
  const metrics = createMetrics();
  // Every call without a deadline of its own gets ENGINE_WAIT_MS, its retries within it.
  const temporalMissing = () => engines.state('temporal').up === false;
  const calls = temporalCalls(config.ENGINE_WAIT_MS, temporalMissing);
  const connection = Connection.lazy({ address: config.TEMPORAL_ADDRESS, interceptors: [calls.interceptor] });
  const bounded = boundedTemporalCalls(connection);
  // The other clusters' clients are made like the default one (docs/placement.md).
  const pool = createClusterPool(mongo, config.MONGODB_CLUSTERS, { maxPoolSize: 50, serverSelectionTimeoutMS: 10_000 });
  const engines: EngineWatch = createEngineWatch({
    mongo,
    clusters: pool,
    temporalAddress: config.TEMPORAL_ADDRESS,
    temporalAnswers: (deadline) => bounded(deadline, () => connection.workflowService.getSystemInfo({})),
    waitMs: config.ENGINE_WAIT_MS,
    log,
  });
  // One series per engine, the database's per cluster (labels from configuration, so bounded).
  const engineUp = metrics.engineUp;
  const series = (engine: Engine, cluster: string | null) => (cluster === null ? { engine } : { engine, cluster });
  for (const { label } of pool.clusters) engineUp.set(series('database', label), 1);
  engineUp.set(series('temporal', null), 1);
  engines.onChange((engine, up, cluster) => engineUp.set(series(engine, cluster), up ? 1 : 0));
  // Traced: every start, signal and update carries the caller's span to the workflow (its headers).
  const interceptors = tracing.enabled ? { workflow: [workflowClientTracing(tracing)] } : undefined;
  const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE, interceptors });
  const dbs = new Map<string, Db>();
  const platformDb = mongo.db(`${config.DB_PREFIX}platform`);
  const changeFeed = createChangeFeed({
    db: platformDb,
    log,
    leaseMs: config.STATE_LEASE_MS,
    mode: config.STATE_FEED,
    idlePollMs: config.STATE_FEED === 'poll' ? 50 : 40,
    observeLag: metrics.changeFeedLag.bind({}).observe,
    databaseMissing: () => !engines.state('database').up,
  });
  // A config kind's writes are `site_config`'s (core/site-config.ts).
  const watched = new Set(options.watchedCollections ?? []);
  if ([...watched].some(isSiteConfigKind)) watched.add(SITE_CONFIG_COLLECTION);
  const writes = createWriteWatch({ feed: changeFeed, collections: watched });
  const firstWrite = createFirstWriteSetup(options.workspaceIndexes ?? []);
  const siteStateMoves = createSiteStateMoves();
  const siteConfigViews = createSiteConfigViews();
  const placement = createPlacement({ pool, platformDb, feed: changeFeed, log });
  if (pool.clusters.length > 1) await placement.load();

  return {
    config,
    metrics,
    tracing,
    engines,
    mongo,
    platformDb,
    changeFeed,
    writes,
    publicGeneration: createPublicGeneration(changeFeed, options.publicCollections ?? []),
    temporal: { client, taskQueue: config.TEMPORAL_TASK_QUEUE, bounded, settleCalls: calls.settle },
    hooks: createHooks(),
    cursors: createCursorCodec(config.SECRET_KEY),
    clock: options.clock ?? systemClock,
    log,
    events: silentPublisher(log),
    placement,
    workspaceDb(workspace) {
      placement.note(workspace);
      let db = dbs.get(workspace.dbName);
      if (!db) {
        db = siteConfigViews.wrap(siteStateMoves.wrap(firstWrite.wrap(writes.watch(placement.db(workspace)))));
        dbs.set(workspace.dbName, db);
      }
      return db;
    },
  };
}

export async function closeServices(services: CoreServices): Promise<void> {
  services.engines.stop();
  await services.changeFeed.stop();
  await services.tracing.shutdown();
  await services.temporal.settleCalls();
  await services.temporal.client.connection.close().catch(() => undefined);
  await services.placement.pool.close();
  await services.mongo.close();
}
