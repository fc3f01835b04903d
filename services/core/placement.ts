import { setTimeout as sleep } from 'node:timers/promises';
import { ObjectId, type Collection, type Db, type MongoClient } from 'mongodb';
import type { Logger } from 'pino';
import type { ChangeFeed } from './change-feed.ts';
import { DEFAULT_CLUSTER, type ClusterPool } from './clusters.ts';
import { ServiceUnavailableError } from './errors.ts';
import { DOCUMENT_WRITES } from './write-watch.ts';
import { PLATFORM_COLLECTIONS, type MoveState, type Workspace } from './tenants.ts';

/**
 * Where each workspace database lives (docs/placement.md). The platform row's `cluster` is the
 * truth (absent: the default cluster); each process keeps the rows placed elsewhere or moving in
 * a table, loaded at start (only when MONGODB_CLUSTERS names more clusters), kept by the state
 * feed's `placement:` topics, which carry the new placement itself (so it is applied before the
 * change is acknowledged, with no read), and loaded again whenever the feed lost trust.
 *
 * The `Db` handed out for a workspace routes every call when it is made: a collection handle kept
 * across a move follows it. While a move runs, every write records which documents it touches
 * (`move_changes`, before the write, marked done after it) so the move can copy them again; while
 * the move switches, writes wait (operations are refused before that, with 423) and then go to
 * the cluster the switch chose.
 */

/** One write made while its workspace moved: the documents it touched (null: any of the collection; `*`: any collection). */
export interface MoveChange {
  _id: ObjectId;
  moveId: string;
  collection: string;
  ids: unknown[] | null;
  /** True from before the write until it finished (or forever, when its process died in between). */
  pending: boolean;
  at: Date;
}
export const MOVE_CHANGES_COLLECTION = 'move_changes';

interface Entry {
  cluster: string;
  move?: { id: string; state: MoveState };
}

/** A workspace row's placement, as far as routing needs it. */
export type PlacedWorkspace = Pick<Workspace, 'dbName'> & Partial<Pick<Workspace, 'cluster' | 'move'>>;

const TOPIC = 'placement:';
/** `placement:<dbName>:<cluster>:<state|none>:<moveId>`: the placement itself, applied as heard. */
export const placementTopic = (dbName: string, cluster: string, move?: { id: string; state: MoveState }) =>
  `${TOPIC}${dbName}:${cluster}:${move?.state ?? 'none'}:${move?.id ?? ''}`;

/** Writes wait this long for a switch to end (it takes at most a few seconds), then answer 503. */
const SWITCH_WAIT_MS = 30_000;
const DATABASE_WRITES = new Set(['dropDatabase', 'dropCollection', 'renameCollection']);
const COLLECTION_WRITES = new Set([...DOCUMENT_WRITES, 'rename', 'drop']);

export interface Placement {
  readonly pool: ClusterPool;
  /** The workspace's database, every call routed to its current cluster. */
  db(workspace: PlacedWorkspace): Db;
  /** A row read just now may name a placement this process has not heard of yet (created elsewhere since the load): it fills that gap; what the feed said wins. */
  note(workspace: PlacedWorkspace): void;
  /** One database on one named cluster, not routed (a move's copy and clean-up). */
  on(cluster: string, dbName: string): Db;
  clusterOf(dbName: string): string;
  /** Reads the rows placed off the default cluster or moving; at start, and after the feed lost trust. */
  load(): Promise<void>;
}

const isOperatorObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' &&
  value !== null &&
  !(value instanceof ObjectId) &&
  !(value instanceof Date) &&
  !('_bsontype' in value) &&
  Object.keys(value).some((key) => key.startsWith('$'));

/** The `_id`s a filter names outright (a value, `$eq`, `$in`); null when it can match others. */
function filterIds(filter: unknown): unknown[] | null {
  if (!filter || typeof filter !== 'object' || !('_id' in filter)) return null;
  const id = (filter as { _id: unknown })._id;
  if (!isOperatorObject(id)) return [id];
  const keys = Object.keys(id);
  if (keys.length === 1 && keys[0] === '$eq') return [id.$eq];
  if (keys.length === 1 && keys[0] === '$in' && Array.isArray(id.$in)) return id.$in as unknown[];
  return null;
}

/** An insert's `_id`, given now when missing (as the driver would) so the move knows it. */
function insertedId(doc: Record<string, unknown>): unknown {
  if (doc._id === undefined) doc._id = new ObjectId();
  return doc._id;
}

/** The documents a collection write touches, as far as its arguments say (null: possibly any). */
export function touchedIds(method: string, args: unknown[]): unknown[] | null {
  if (method === 'insertOne') return [insertedId(args[0] as Record<string, unknown>)];
  if (method === 'insertMany') return (args[0] as Record<string, unknown>[]).map(insertedId);
  if (method === 'bulkWrite') {
    const ids: unknown[] = [];
    for (const op of args[0] as Record<string, { filter?: unknown; document?: Record<string, unknown> }>[]) {
      const [kind, body] = Object.entries(op)[0] ?? [];
      if (kind === 'insertOne' && body?.document) ids.push(insertedId(body.document));
      else {
        const named = filterIds(body?.filter);
        if (!named) return null;
        ids.push(...named);
      }
    }
    return ids;
  }
  if (method === 'rename' || method === 'drop') return null;
  return filterIds(args[0]);
}

export function createPlacement({ pool, platformDb, feed, log }: { pool: ClusterPool; platformDb: Db; feed: ChangeFeed; log: Logger }): Placement {
  const table = new Map<string, Entry>();
  let reloading: Promise<void> | null = null;
  const changes = platformDb.collection<MoveChange>(MOVE_CHANGES_COLLECTION);
  const entryOf = (dbName: string): Entry => table.get(dbName) ?? { cluster: DEFAULT_CLUSTER };
  // The driver's Db and Collection objects, made once per client and name: every call through a
  // routed collection asks for them again (its cluster may have changed), and `MongoClient.db` and
  // `Db.collection` build a new object with its options resolved each time (about a tenth of a
  // gateway's CPU under a burst of entry writes).
  const dbsOf = new WeakMap<MongoClient, Map<string, Db>>();
  const collectionsOf = new WeakMap<Db, Map<string, Collection>>();
  const on = (cluster: string, dbName: string): Db => {
    const client = pool.client(cluster);
    let byName = dbsOf.get(client);
    if (!byName) dbsOf.set(client, (byName = new Map()));
    let db = byName.get(dbName);
    if (!db) byName.set(dbName, (db = client.db(dbName)));
    return db;
  };
  const collectionOf = (db: Db, name: string, options?: object): Collection => {
    if (options) return db.collection(name, options);
    let byName = collectionsOf.get(db);
    if (!byName) collectionsOf.set(db, (byName = new Map()));
    let collection = byName.get(name);
    if (!collection) byName.set(name, (collection = db.collection(name)));
    return collection;
  };

  // Entries are kept once heard, `default` ones too: a row read before a move back to `default`
  // must never fill in (`note`) what the feed already said.
  const set = (dbName: string, entry: Entry) => table.set(dbName, entry);

  const load = async () => {
    const rows = await platformDb
      .collection<Workspace>(PLATFORM_COLLECTIONS.workspaces)
      .find({ $or: [{ cluster: { $exists: true } }, { 'move.state': { $exists: true } }] }, { projection: { dbName: 1, cluster: 1, move: 1 } })
      .toArray();
    const placed = new Map<string, Entry>(
      rows.map((row) => [row.dbName, { cluster: row.cluster ?? DEFAULT_CLUSTER, ...(row.move ? { move: { id: row.move.id, state: row.move.state } } : {}) }]),
    );
    // What is no longer listed went back to `default` (a change missed while the feed was down).
    for (const dbName of table.keys()) if (!placed.has(dbName)) set(dbName, { cluster: DEFAULT_CLUSTER });
    for (const [dbName, entry] of placed) set(dbName, entry);
  };

  const reload = () => {
    if (reloading) return;
    const run = async () => {
      for (;;) {
        try {
          return await load();
        } catch (error) {
          log.warn({ err: error }, 'placement reload failed; writes wait for it');
          await sleep(500);
        }
      }
    };
    reloading = run().finally(() => (reloading = null));
  };

  feed.subscribe((topic) => {
    if (topic === null) {
      if (pool.clusters.length > 1) reload();
      return;
    }
    if (!topic.startsWith(TOPIC)) return;
    const [dbName, cluster, state, id] = topic.slice(TOPIC.length).split(':') as [string, string, string, string];
    set(dbName, { cluster, ...(state !== 'none' ? { move: { id, state: state as MoveState } } : {}) });
  });

  /** The placement a write may use: after a reload, and once no switch is under way. */
  const settled = async (dbName: string): Promise<Entry> => {
    const deadline = Date.now() + SWITCH_WAIT_MS;
    for (;;) {
      if (reloading) await reloading;
      const entry = entryOf(dbName);
      if (entry.move?.state !== 'switching') return entry;
      if (Date.now() > deadline) throw new ServiceUnavailableError('Workspace is moving');
      await sleep(50);
    }
  };

  const write = async (dbName: string, collection: string, run: (db: Db) => Promise<unknown>, ids: () => unknown[] | null) => {
    const entry = await settled(dbName);
    const db = on(entry.cluster, dbName);
    if (!entry.move || entry.move.state === 'switched') return run(db);
    const change: MoveChange = { _id: new ObjectId(), moveId: entry.move.id, collection, ids: ids(), pending: true, at: new Date() };
    await changes.insertOne(change);
    try {
      return await run(db);
    } finally {
      await changes.updateOne({ _id: change._id }, { $set: { pending: false } }).catch((error) => log.warn({ err: error }, 'move change not marked done'));
    }
  };

  const routedCollection = (dbName: string, name: string, options?: object): Collection => {
    const current = () => collectionOf(on(entryOf(dbName).cluster, dbName), name, options);
    return new Proxy(current(), {
      get(_target, property) {
        const target = current();
        const value = Reflect.get(target, property, target);
        if (typeof value !== 'function') return value;
        if (typeof property !== 'string' || !COLLECTION_WRITES.has(property)) return value.bind(target);
        return (...args: unknown[]) =>
          write(
            dbName,
            name,
            (db) => (collectionOf(db, name, options) as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[property]!(...args),
            () => touchedIds(property, args),
          );
      },
    });
  };

  return {
    pool,
    on,
    clusterOf: (dbName) => entryOf(dbName).cluster,
    load,
    note({ dbName, cluster }) {
      if (!table.has(dbName) && cluster && cluster !== DEFAULT_CLUSTER) set(dbName, { cluster });
    },
    db({ dbName }) {
      return new Proxy(on(entryOf(dbName).cluster, dbName), {
        get(_target, property) {
          if (property === 'collection') return (name: string, options?: object) => routedCollection(dbName, name, options);
          const target = on(entryOf(dbName).cluster, dbName);
          const value = Reflect.get(target, property, target);
          if (typeof value !== 'function') return value;
          if (typeof property === 'string' && DATABASE_WRITES.has(property)) {
            return (...args: unknown[]) =>
              write(
                dbName,
                // A dropped collection is copied again whole; a database dropped or renamed into, every collection.
                property === 'dropCollection' && typeof args[0] === 'string' ? args[0] : '*',
                (db) => (db as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[property]!(...args),
                () => null,
              );
          }
          return value.bind(target);
        },
      });
    },
  };
}
