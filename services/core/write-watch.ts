import { randomBytes } from 'node:crypto';
import type { CommandFailedEvent, CommandStartedEvent, CommandSucceededEvent, MongoClient } from 'mongodb';
import type { Logger } from 'pino';
import type { ChangeFeed } from './change-feed.ts';
import { topics } from './topics.ts';

/** Commands that change documents or collections; everything else reads. */
const WRITE_COMMANDS = new Set(['insert', 'update', 'delete', 'findAndModify', 'drop', 'dropDatabase', 'create', 'renameCollection']);
/** `db-writes:` (origins are hex; the database name follows the second colon). */
const DB_WRITES = topics.dbWrites('', '').slice(0, -1);

/**
 * A generation per workspace database, moved by every finished write to a watched collection of it
 * from any process: this one sees its own writes through the driver's command events (so no write
 * path has to remember to announce), every other process hears them as `db-writes:<origin>:<dbName>`
 * changes on the feed (its own come back too and are skipped by their origin). A value computed from those collections is good while the generation it
 * was computed under is still current and the feed trusted (docs/access.md, "Held management reads").
 */
export interface WriteWatch {
  /** Current generation of a database's watched collections in this process (monotonic). */
  generation(dbName: string): number;
}

export interface WriteWatchOptions {
  mongo: MongoClient;
  feed: ChangeFeed;
  log: Logger;
  /** Which collections of which databases count (`*`: the whole database, as `dropDatabase` names it). */
  watched(dbName: string, collection: string): boolean;
}

export function createWriteWatch({ mongo, feed, log, watched }: WriteWatchOptions): WriteWatch {
  let counter = 0;
  /** Raised on every loss of trust: whatever was computed before it may have missed a remote write. */
  let floor = 0;
  const byDb = new Map<string, number>();
  const inFlight = new Map<number, string>();
  const toAnnounce = new Set<string>();
  const bump = (dbName: string) => byDb.set(dbName, ++counter);
  const origin = randomBytes(6).toString('hex');
  const ownPrefix = topics.dbWrites('', origin);

  const announce = () => {
    const names = [...toAnnounce].map((dbName) => topics.dbWrites(dbName, origin));
    toAnnounce.clear();
    feed.announce(names).catch((error) => log.warn({ err: error }, 'announcing database writes failed'));
  };

  mongo.on('commandStarted', (event: CommandStartedEvent) => {
    if (!WRITE_COMMANDS.has(event.commandName)) return;
    const target = event.command[event.commandName];
    if (typeof target === 'string' ? watched(event.databaseName, target) : watched(event.databaseName, '*')) inFlight.set(event.requestId, event.databaseName);
  });
  // After the write, succeeded or not (an ordered insert can fail halfway): a read that began before
  // it finished is never kept under the generation that follows it.
  const finished = (event: CommandSucceededEvent | CommandFailedEvent) => {
    const dbName = inFlight.get(event.requestId);
    if (dbName === undefined) return;
    inFlight.delete(event.requestId);
    bump(dbName);
    if (toAnnounce.size === 0) setImmediate(announce);
    toAnnounce.add(dbName);
  };
  mongo.on('commandSucceeded', finished);
  mongo.on('commandFailed', finished);

  feed.subscribe((topic) => {
    if (topic === null) floor = ++counter;
    else if (topic.startsWith(DB_WRITES) && !topic.startsWith(ownPrefix)) bump(topic.slice(topic.indexOf(':', DB_WRITES.length) + 1));
  });

  return {
    generation: (dbName) => Math.max(byDb.get(dbName) ?? 0, floor),
  };
}
