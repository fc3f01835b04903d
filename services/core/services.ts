import { MongoClient, type Db } from 'mongodb';
import { Client, Connection } from '@temporalio/client';
import pino, { type Logger } from 'pino';
import type { Config } from './config.ts';
import type { CoreServices, EventPublisher } from './context.ts';
import { systemClock, type Clock } from './clock.ts';
import { createCursorCodec } from './cursors.ts';
import { createFirstUse } from './first-use.ts';
import { loggerOptions } from './logger.ts';
import { createHooks } from './hooks.ts';
import { createChangeFeed } from './change-feed.ts';
import { createWriteWatch } from './write-watch.ts';
import { createPublicGeneration, type PublicCollection } from './public-generation.ts';

/** Until the events feature is wired in, events go nowhere (but are still logged at debug level). */
const silentPublisher = (log: Logger): EventPublisher => ({
  async publish(_ctx, event) {
    log.debug({ event }, 'event published without subscribers');
  },
});

export interface CoreServiceOptions {
  clock?: Clock;
  log?: Logger;
  /** Emit the driver's command events (benchmarks and tests count database commands with them). */
  monitorCommands?: boolean;
  /** Collections whose writes move their database's generation (`core/write-watch.ts`): what held reads depend on. */
  watchedCollections?: ReadonlySet<string>;
  /** Collections the Public API reads: a write to one moves its site's public generation (`core/public-generation.ts`). */
  publicCollections?: readonly PublicCollection[];
}

/**
 * Builds the process-wide dependencies: one MongoClient and one Temporal connection per process
 * (never one per request). Temporal connects lazily so a gateway can answer while Temporal is down.
 */
export async function createServices(config: Config, options: CoreServiceOptions = {}): Promise<CoreServices> {
  const log = options.log ?? pino(loggerOptions(config.LOG_LEVEL));
  const mongo = new MongoClient(config.MONGODB_URI, { maxPoolSize: 50, serverSelectionTimeoutMS: 10_000, monitorCommands: options.monitorCommands ?? false });
  await mongo.connect();
  const connection = Connection.lazy({ address: config.TEMPORAL_ADDRESS });
  const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
  const dbs = new Map<string, Db>();
  const platformDb = mongo.db(`${config.DB_PREFIX}platform`);
  const changeFeed = createChangeFeed({
    db: platformDb,
    log,
    leaseMs: config.STATE_LEASE_MS,
    mode: config.STATE_FEED,
    idlePollMs: config.STATE_FEED === 'poll' ? 50 : 40,
  });
  const writes = createWriteWatch({ feed: changeFeed, log, collections: options.watchedCollections ?? new Set() });

  return {
    config,
    mongo,
    platformDb,
    changeFeed,
    writes,
    publicGeneration: createPublicGeneration(changeFeed, options.publicCollections ?? []),
    temporal: { client, taskQueue: config.TEMPORAL_TASK_QUEUE },
    hooks: createHooks(),
    cursors: createCursorCodec(config.SECRET_KEY),
    firstUse: createFirstUse(),
    clock: options.clock ?? systemClock,
    log,
    events: silentPublisher(log),
    workspaceDb(workspace) {
      let db = dbs.get(workspace.dbName);
      if (!db) {
        db = writes.watch(mongo.db(workspace.dbName));
        dbs.set(workspace.dbName, db);
      }
      return db;
    },
  };
}

export async function closeServices(services: CoreServices): Promise<void> {
  await services.changeFeed.stop();
  await services.temporal.client.connection.close().catch(() => undefined);
  await services.mongo.close();
}
