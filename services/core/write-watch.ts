import { randomBytes } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import type { ChangeFeed } from './change-feed.ts';
import { topics } from './topics.ts';

/** Collection methods that change documents (the public generation follows the same ones). */
export const DOCUMENT_WRITES: ReadonlySet<string> = new Set([
  'insertOne',
  'insertMany',
  'bulkWrite',
  'updateOne',
  'updateMany',
  'replaceOne',
  'deleteOne',
  'deleteMany',
  'findOneAndUpdate',
  'findOneAndReplace',
  'findOneAndDelete',
]);
/** Collection methods that change a collection; every other method reads (or changes only indexes). */
const COLLECTION_WRITES = new Set([...DOCUMENT_WRITES, 'rename', 'drop']);
/** Database methods that change a watched collection whatever it is called. */
const DATABASE_WRITES = new Set(['dropDatabase', 'dropCollection', 'renameCollection']);
/**
 * How long the writes of a database wait to be announced together: a request's writes (an entry,
 * its postings) land a few milliseconds apart and go out as one row instead of one each, the same
 * row as the request's content announcement when it makes one (`ChangeFeed.announceWithin`). Other
 * processes hear them at their next feed poll anyway (50 ms); this process moved its generation at once.
 */
const ANNOUNCE_AFTER_MS = 10;
/** `db-writes:` (origins are hex; the database name follows the second colon). */
const DB_WRITES = topics.dbWrites('', '').slice(0, -1);

/**
 * A generation per workspace database, moved by every finished write to a watched collection of it
 * from any process: this one sees its own writes because every workspace `Db` it hands out
 * (`services.workspaceDb`) passes its write methods through `watch` (so no write path, operation,
 * activity or plugin, has to remember to announce); every other process hears them as
 * `db-writes:<origin>:<dbName>` changes on the feed (its own come back too and are skipped by their
 * origin). A value computed from those collections is good while the generation it was computed
 * under is still current and the feed trusted (docs/access.md, "Held management reads").
 */
export interface WriteWatch {
  /** Current generation of a database's watched collections in this process (monotonic). */
  generation(dbName: string): number;
  /** The same database, its writes to watched collections followed. */
  watch(db: Db): Db;
}

export interface WriteWatchOptions {
  feed: ChangeFeed;
  /** The collections held reads depend on (their operations' `heldAnswer.reads`). */
  collections: ReadonlySet<string>;
}

export function createWriteWatch({ feed, collections }: WriteWatchOptions): WriteWatch {
  let counter = 0;
  /** Raised on every loss of trust: whatever was computed before it may have missed a remote write. */
  let floor = 0;
  const byDb = new Map<string, number>();
  const origin = randomBytes(6).toString('hex');
  const ownPrefix = topics.dbWrites('', origin);
  const bump = (dbName: string) => byDb.set(dbName, ++counter);

  // After the write, succeeded or not (an ordered insert can fail halfway): a read that began before
  // it finished is never kept under the generation that follows it.
  const written = (dbName: string) => {
    bump(dbName);
    feed.announceWithin(topics.dbWrites(dbName, origin), ANNOUNCE_AFTER_MS);
  };
  const followed = <T>(dbName: string, result: unknown): T => {
    if (!(result instanceof Promise)) return result as T;
    return result.then(
      (value) => {
        written(dbName);
        return value;
      },
      (error) => {
        written(dbName);
        throw error;
      },
    ) as T;
  };

  feed.subscribe((topic) => {
    if (topic === null) floor = ++counter;
    else if (topic.startsWith(DB_WRITES) && !topic.startsWith(ownPrefix)) bump(topic.slice(topic.indexOf(':', DB_WRITES.length) + 1));
  });

  const watchCollection = (collection: Collection, dbName: string): Collection =>
    new Proxy(collection, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        if (typeof property !== 'string' || !COLLECTION_WRITES.has(property)) return value.bind(target);
        return (...args: unknown[]) => followed(dbName, (value as (...a: unknown[]) => unknown).apply(target, args));
      },
    });

  return {
    generation: (dbName) => Math.max(byDb.get(dbName) ?? 0, floor),
    watch(db) {
      if (collections.size === 0) return db;
      const dbName = db.databaseName;
      return new Proxy(db, {
        get(target, property, receiver) {
          const value = Reflect.get(target, property, receiver);
          if (typeof value !== 'function') return value;
          if (property === 'collection') {
            return (name: string, options?: object) => {
              const collection = target.collection(name, options);
              return collections.has(name) ? watchCollection(collection, dbName) : collection;
            };
          }
          if (typeof property === 'string' && DATABASE_WRITES.has(property)) {
            return (...args: unknown[]) => followed(dbName, (value as (...a: unknown[]) => unknown).apply(target, args));
          }
          return value.bind(target);
        },
      });
    },
  };
}
