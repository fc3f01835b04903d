import type { Collection, Db, Document } from 'mongodb';
import type { ChangeFeed } from './change-feed.ts';
import { topics } from './topics.ts';
import { DOCUMENT_WRITES } from './write-watch.ts';
import { siteStateCollection, siteStateId } from './site-state.ts';

/** The counter document per site (in `site_state`, `content:<siteId>`) whose generation every public cache is keyed on. */
export const publicStateId = (siteId: string) => siteStateId('content', siteId);

/** The site's public generation as stored (0 before the first bump). */
export async function storedGeneration(db: Db, siteId: string): Promise<number> {
  return (await siteStateCollection<StateDoc>(db).findOne({ _id: publicStateId(siteId), siteId }))?.generation ?? 0;
}

interface StateDoc {
  _id: string;
  siteId: string;
  generation: number;
}

/**
 * A collection the Public API reads, as a feature declares it (`Feature.publicCollections`): its
 * name, or the name and when an inserted document can be public at all. An insert none of whose
 * documents `insertIsPublic` changes no public read, so it leaves the generation alone (an
 * entry's draft); updates and deletes always move it, since the document before may have been public.
 */
export type PublicCollection = string | { name: string; insertIsPublic?: (doc: Document) => boolean; idPrefix?: string };

interface PublicRule {
  insertIsPublic?: (doc: Document) => boolean;
  /**
   * Only documents whose `_id` starts with this are public (a collection shared by several kinds of
   * documents, `site_state`: its languages are public, its counters, the generation itself among
   * them, are not). A write is matched by its filter's or its document's `_id`; one that names none
   * (a bulk write) counts as public.
   */
  idPrefix?: string;
}

/** The `_id` a write names: the inserted documents' or the filter's (undefined: it names none). */
function writtenIds(property: string, args: unknown[]): unknown[] | undefined {
  if (property === 'insertOne') return [(args[0] as Document)._id];
  if (property === 'insertMany') return (args[0] as Document[]).map((doc) => doc._id);
  if (property === 'bulkWrite') return undefined;
  const filter = args[0] as Document | undefined;
  return filter && '_id' in filter ? [filter._id] : undefined;
}

/** A string `_id`, or the lower bound of an `_id` range (a kind of `site_state`, `siteStateKindRange`). */
const idText = (id: unknown) =>
  typeof id === 'string' ? id : typeof (id as { $gte?: unknown } | null)?.$gte === 'string' ? (id as { $gte: string }).$gte : undefined;

function outsidePrefix(property: string, args: unknown[], prefix: string | undefined): boolean {
  if (prefix === undefined) return false;
  const ids = writtenIds(property, args);
  return ids !== undefined && ids.every((id) => idText(id) !== undefined && !idText(id)!.startsWith(prefix));
}

/** Whether an insert (`insertOne`, `insertMany`) holds no document a public read can see. */
function insertIsPrivate(property: string, args: unknown[], insertIsPublic: ((doc: Document) => boolean) | undefined): boolean {
  if (!insertIsPublic) return false;
  if (property === 'insertOne') return !insertIsPublic(args[0] as Document);
  if (property === 'insertMany') return !(args[0] as Document[]).some(insertIsPublic);
  return false;
}

/** Whether a driver write result says a document changed (a no-op update or a missed filter moves nothing). */
function changed(result: unknown): boolean {
  if (result === null || result === undefined) return false;
  if (typeof result !== 'object') return true;
  const r = result as Record<string, unknown>;
  const counts = ['insertedCount', 'modifiedCount', 'upsertedCount', 'deletedCount'].filter((k) => typeof r[k] === 'number');
  if (counts.length > 0) return counts.some((k) => (r[k] as number) > 0);
  // insertOne answers `{ insertedId }`; findOneAnd* the document (or null, above).
  return true;
}

/**
 * The write side of the public read cache (docs/content.md, "The read cache and its
 * invalidation"): the site's content generation. Nobody calls `bump` by hand for a content write:
 * every context's database (`createContext`) is `follow`ed, so a finished write that changed a
 * document of a public collection (the ones features declare, `Feature.publicCollections`) moves
 * the generation before the write's promise settles (read-your-writes on this gateway; an insert
 * only when a document of it can be public, `PublicCollection`), and the
 * change is announced to the others. The read side (`public-read/state.ts`) only reads it.
 */
export interface PublicGeneration {
  readonly collections: ReadonlySet<string>;
  /** Moves the site's generation (also used by an explicit cache clear). */
  bump(db: Db, siteId: string): Promise<void>;
  /** Called in this process, synchronously, after each bump (the read side drops its copy). */
  onBump(listener: (siteId: string) => void): void;
  /** The database as one site's writer sees it: writes to public collections bump that site's generation. */
  follow(db: Db, siteId: string): Db;
  /**
   * The same move for a write made through the bare handle that changed a document of a public
   * collection (sharing `follow`'s bumps): for a writer that overlaps the move with its own next
   * round trip (the content write path's revision) and awaits both before its write returns.
   */
  written(db: Db, siteId: string): Promise<void>;
}

export function createPublicGeneration(feed: ChangeFeed, declared: Iterable<PublicCollection>): PublicGeneration {
  const insertRules = new Map<string, PublicRule>();
  for (const entry of declared) {
    if (typeof entry === 'string') insertRules.set(entry, {});
    else insertRules.set(entry.name, { insertIsPublic: entry.insertIsPublic, idPrefix: entry.idPrefix });
  }
  const collections: ReadonlySet<string> = new Set(insertRules.keys());
  const listeners: Array<(siteId: string) => void> = [];
  const bump = async (db: Db, siteId: string) => {
    await siteStateCollection<StateDoc>(db).updateOne({ _id: publicStateId(siteId), siteId }, { $inc: { generation: 1 } }, { upsert: true });
    for (const listener of listeners) listener(siteId);
    // Content freshness is announced, not awaited (no acknowledgements, unlike access changes).
    await feed.announce(topics.siteContent(siteId));
  };
  // Writes finishing together share bumps: a write waits for a bump that starts after it finished
  // (the one running may have read the counter before it), so at most one runs and one waits per site.
  const flights = new Map<string, { running: Promise<void> | null; queued: Promise<void> | null }>();
  const bumpAfter = (db: Db, siteId: string): Promise<void> => {
    const key = `${db.databaseName}:${siteId}`;
    let flight = flights.get(key);
    if (!flight) flights.set(key, (flight = { running: null, queued: null }));
    const f = flight;
    const run = (): Promise<void> =>
      (f.running = bump(db, siteId).finally(() => {
        f.running = null;
        if (!f.queued) flights.delete(key);
      }));
    if (!f.running) return run();
    f.queued ??= f.running
      .catch(() => undefined)
      .then(() => {
        f.queued = null;
        return run();
      });
    return f.queued;
  };
  const followCollection = (collection: Collection, db: Db, siteId: string, { insertIsPublic, idPrefix }: PublicRule): Collection =>
    new Proxy(collection, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        if (typeof property !== 'string' || !DOCUMENT_WRITES.has(property)) return value.bind(target);
        return async (...args: unknown[]) => {
          const result: unknown = await (value as (...a: unknown[]) => unknown).apply(target, args);
          if (changed(result) && !insertIsPrivate(property, args, insertIsPublic) && !outsidePrefix(property, args, idPrefix)) await bumpAfter(db, siteId);
          return result;
        };
      },
    });
  return {
    collections,
    bump,
    onBump: (listener) => void listeners.push(listener),
    written: bumpAfter,
    follow(db, siteId) {
      if (collections.size === 0) return db;
      return new Proxy(db, {
        get(target, property, receiver) {
          if (property !== 'collection') {
            const value = Reflect.get(target, property, receiver);
            return typeof value === 'function' ? value.bind(target) : value;
          }
          return (name: string, options?: object) => {
            const collection = target.collection(name, options);
            const rule = insertRules.get(name);
            return rule ? followCollection(collection, target, siteId, rule) : collection;
          };
        },
      });
    },
  };
}
