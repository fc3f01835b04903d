import type { Collection, Db, IndexDescription } from 'mongodb';
import type { IndexSpec } from './feature.ts';
import { DOCUMENT_WRITES } from './write-watch.ts';

/**
 * Collections and their indexes are made when a feature first writes, not when a workspace is
 * provisioned (issue 24: a fresh workspace holds only what it uses; every collection and index is
 * a file a MongoDB deployment is sized by). The rule lives here, in the one place every workspace
 * `Db` is handed out (`services.workspaceDb`): the first write in this process to a collection
 * that has declared indexes (`Feature.indexes`) creates them first (one idempotent
 * `createIndexes`, awaited, so a unique index exists before the first document), then writes.
 * Reads of a collection never written answer empty, as MongoDB does. A feature that declares its
 * indexes gets this without code of its own (docs/how-to.md).
 */

/** Collection methods that can create a collection: every document write but the deletes (an insert, or an upsert). */
const CREATING_WRITES: ReadonlySet<string> = new Set([...DOCUMENT_WRITES].filter((method) => !/^(delete|findOneAndDelete)/.test(method)));

export const indexDescriptions = (specs: readonly IndexSpec[]): IndexDescription[] =>
  specs.map((spec) => ({ ...spec.options, key: spec.keys }) as IndexDescription);

export interface FirstWriteSetup {
  /** The same database; the first creating write to each collection with declared indexes makes them first. */
  wrap(db: Db): Db;
}

export function createFirstWriteSetup(specs: readonly IndexSpec[]): FirstWriteSetup {
  const byCollection = new Map<string, IndexDescription[]>();
  for (const spec of specs) byCollection.set(spec.collection, [...(byCollection.get(spec.collection) ?? []), ...indexDescriptions([spec])]);
  // One entry per database and collection this process has written to (as many as the Db handles it keeps).
  const made = new Map<string, Promise<unknown>>();

  const ensure = (collection: Collection, indexes: IndexDescription[]) => {
    const id = `${collection.dbName}\u0000${collection.collectionName}`;
    let pending = made.get(id);
    if (!pending) {
      pending = collection.createIndexes(indexes);
      made.set(id, pending);
      // A failed creation is tried again by the next write (and this one fails with it).
      pending.catch(() => made.delete(id));
    }
    return pending;
  };

  const wrapCollection = (collection: Collection, indexes: IndexDescription[]): Collection =>
    new Proxy(collection, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        if (typeof property !== 'string' || !CREATING_WRITES.has(property)) return value.bind(target);
        return (...args: unknown[]) => ensure(target, indexes).then(() => (value as (...a: unknown[]) => unknown).apply(target, args));
      },
    });

  return {
    wrap(db) {
      if (byCollection.size === 0) return db;
      // Each collection handle made once (without options): the handles below it (write watch,
      // placement) resolve what they follow on every call, so one handle serves every request.
      const handles = new Map<string, Collection>();
      const handle = (target: Db, name: string, options?: object): Collection => {
        const known = options ? undefined : handles.get(name);
        if (known) return known;
        const collection = target.collection(name, options);
        const indexes = byCollection.get(name);
        const made = indexes ? wrapCollection(collection, indexes) : collection;
        if (!options) handles.set(name, made);
        return made;
      };
      return new Proxy(db, {
        get(target, property, receiver) {
          const value = Reflect.get(target, property, receiver);
          if (property !== 'collection' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
          return (name: string, options?: object) => handle(target, name, options);
        },
      });
    },
  };
}
