import { AbstractCursor, ObjectId, type AnyBulkWriteOperation, type Collection, type Db, type Document } from 'mongodb';
import type { IndexSpec } from './feature.ts';
import { dropIfExists } from './mongo-errors.ts';

/**
 * The hand-made configuration of a workspace's sites, one collection for all of it (issue 24, a
 * lean footprint: fifteen collections, ten of them with an index of their own, held what people
 * make one by one; and the export's plan, read by `_id` only). Each document keeps its `_id` and
 * fields and gains two:
 * - `_c`: its kind, the name of the collection it had (`menus`, `roles`, ...);
 * - `_k`: what identifies it within its site and kind (the fields its collection's unique index
 *   had, `SITE_CONFIG_KINDS`; its `_id` for a kind that had none), unique with `{ _c, siteId }`.
 *
 * Features still ask for `db.collection('menus')`: every workspace `Db` handed out
 * (`services.workspaceDb`) answers a config kind's name with a view of `site_config` that adds
 * `_c` (and `_k` when the filter names the kind's key) to every filter, `_c` and `_k` to every
 * document written, and leaves them out of what it reads (docs/footprint.md). Machinery that copies
 * collections by name (backup, restore, placement, index upgrades) uses `unviewed(db)`.
 */
export const SITE_CONFIG_COLLECTION = 'site_config';

/** Each kind (the collection its documents had) and the fields its unique index had within a site ([]: none, `_id` stands for them). */
export const SITE_CONFIG_KINDS: Readonly<Record<string, readonly string[]>> = {
  content_types: ['slug'],
  taxonomies: ['slug'],
  menus: ['slug'],
  redirects: ['from'],
  roles: ['name'],
  email_templates: ['key'],
  widget_areas: ['key'],
  widgets: [],
  design_documents: ['kind', 'key'],
  comment_rules: [],
  comment_spam_terms: ['term'],
  plugins: [],
  invitations: [],
  api_keys: ['lookup'],
  webhook_endpoints: [],
  /** Not made by hand: a static export run's plan, read and deleted by `_id` and `_id` ranges only (export/runner.ts). */
  export_plan: [],
};

export const isSiteConfigKind = (name: string): boolean => Object.hasOwn(SITE_CONFIG_KINDS, name);

/**
 * `{ _c, siteId, _k }` unique: each kind's former unique index (and its lookups by natural key);
 * `{ _c, siteId, _id }`: a site's documents of a kind in order (every list pages by `_id`), and
 * a kind across the workspace (`{ _c }`, its leading key).
 */
export const SITE_CONFIG_INDEXES: readonly IndexSpec[] = [
  { collection: SITE_CONFIG_COLLECTION, keys: { _c: 1, siteId: 1, _k: 1 }, options: { unique: true } },
  { collection: SITE_CONFIG_COLLECTION, keys: { _c: 1, siteId: 1, _id: 1 } },
];

const HIDDEN = { _c: 0, _k: 0 } as const;

/** A value an equality on it names (not an operator object, an array or a pattern). */
function plain(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value !== 'object') return true;
  return value instanceof ObjectId || value instanceof Date;
}

/** `_k` for a kind from fields (a document, or a filter's equalities), undefined when one is missing. */
function keyOf(kind: string, fields: Document): unknown {
  const names = SITE_CONFIG_KINDS[kind].length > 0 ? SITE_CONFIG_KINDS[kind] : ['_id'];
  const values = names.map((name) => fields[name]);
  if (!values.every(plain)) return undefined;
  // One field: its value as it is; several: joined (none of them holds U+0001).
  return values.length === 1 ? values[0] : values.map(String).join('\u0001');
}

const isList = (value: unknown): value is { $in: unknown[] } =>
  typeof value === 'object' && value !== null && Object.keys(value).length === 1 && Array.isArray((value as { $in?: unknown }).$in);

/**
 * The kind's filter: `_c`, and `_k` wherever the filter names the key, so `{ _c, siteId, _k }`
 * serves it as the kind's own unique index did: the whole key (equal, or one field `$in` a list),
 * or the first of two fields (`_k` starts with it; that field's equality is then `_k`'s range).
 */
function viewFilter(kind: string, filter: Document = {}): Document {
  const out: Document = { ...filter, _c: kind };
  const names = SITE_CONFIG_KINDS[kind];
  if (names.length === 0) return out;
  const key = keyOf(kind, filter);
  if (key !== undefined) out._k = key;
  else if (names.length === 1 && isList(filter[names[0]]) && filter[names[0]].$in.every(plain)) out._k = { $in: filter[names[0]].$in };
  else if (names.length > 1 && plain(filter[names[0]])) {
    delete out[names[0]];
    out._k = { $gte: `${String(filter[names[0]])}\u0001`, $lt: `${String(filter[names[0]])}\u0002` };
  }
  return out;
}

/** A sort on a one-field key is `_k`'s order (the kind's unique index served it so). */
function viewSort(kind: string, sort: unknown): unknown {
  const names = SITE_CONFIG_KINDS[kind];
  if (names.length !== 1 || sort === null || typeof sort !== 'object' || Array.isArray(sort) || sort instanceof Map) return sort;
  return Object.fromEntries(Object.entries(sort).map(([field, direction]) => [field === names[0] ? '_k' : field, direction]));
}

function viewDocument(kind: string, doc: Document): Document {
  // The driver gives a document without one its `_id` on the caller's object too.
  if (doc._id === undefined) doc._id = new ObjectId();
  const key = keyOf(kind, doc);
  if (key === undefined) throw new Error(`${kind}: a document without its key (${SITE_CONFIG_KINDS[kind].join(', ')})`);
  return { ...doc, _c: kind, _k: key };
}

/**
 * An update that writes a kind's key fields writes `_k` with them; an upsert gives the document
 * it inserts its `_k` (from the filter's equalities, or what it sets on insert).
 */
function viewUpdate(kind: string, filter: Document, update: Document | Document[], upsert: boolean): Document {
  if (Array.isArray(update)) throw new Error(`${kind}: pipeline updates are not supported on site_config`);
  const names = SITE_CONFIG_KINDS[kind].length > 0 ? SITE_CONFIG_KINDS[kind] : ['_id'];
  const set = (update.$set ?? {}) as Document;
  const onInsert = (update.$setOnInsert ?? {}) as Document;
  const out: Document = { ...update };
  if (names.some((name) => name in set)) {
    const key = keyOf(kind, { ...equalities(filter), ...onInsert, ...set });
    if (key === undefined) throw new Error(`${kind}: an update changes part of the key (${names.join(', ')}) without the rest`);
    out.$set = { ...set, _k: key };
  } else if (upsert && !('_k' in viewFilter(kind, filter))) {
    const key = keyOf(kind, { ...equalities(filter), ...onInsert });
    if (key === undefined) throw new Error(`${kind}: an upsert without the key (${names.join(', ')})`);
    out.$setOnInsert = { ...onInsert, _k: key };
  }
  return out;
}

const equalities = (filter: Document): Document => Object.fromEntries(Object.entries(filter).filter(([, value]) => plain(value)));

/** Adds the hidden fields to an exclusion projection (or none); an inclusion projection leaves them out already. */
function viewProjection(projection: Document | undefined): Document {
  if (!projection) return { ...HIDDEN };
  const shown = (value: unknown) => value !== 0 && value !== false;
  const fields = Object.entries(projection);
  // `{ _id: 1 }` alone includes only `_id`; otherwise `_id` may go either way in either kind of projection.
  const including = fields.some(([field, value]) => field !== '_id' && shown(value)) || (fields.length === 1 && fields[0][0] === '_id' && shown(fields[0][1]));
  return including ? projection : { ...projection, ...HIDDEN };
}

function viewOptions<O extends { projection?: Document; sort?: unknown } | undefined>(kind: string, options: O): O {
  const out: Document = { ...(options ?? {}), projection: viewProjection(options?.projection) };
  if (options?.sort !== undefined) out.sort = viewSort(kind, options.sort);
  return out as O;
}

function viewPipeline(kind: string, pipeline: Document[]): Document[] {
  const [first, ...rest] = pipeline;
  const head = first && '$match' in first ? [{ $match: viewFilter(kind, first.$match as Document) }, ...rest] : [{ $match: { _c: kind } }, ...pipeline];
  return [...head, { $project: HIDDEN }];
}

function viewBulk(kind: string, op: AnyBulkWriteOperation<Document>): AnyBulkWriteOperation<Document> {
  if ('insertOne' in op) return { insertOne: { document: viewDocument(kind, op.insertOne.document) } };
  if ('updateOne' in op) {
    const { filter, update, upsert } = op.updateOne;
    return { updateOne: { ...op.updateOne, filter: viewFilter(kind, filter), update: viewUpdate(kind, filter, update as Document, !!upsert) } };
  }
  if ('updateMany' in op) {
    const { filter, update, upsert } = op.updateMany;
    return { updateMany: { ...op.updateMany, filter: viewFilter(kind, filter), update: viewUpdate(kind, filter, update as Document, !!upsert) } };
  }
  if ('replaceOne' in op) {
    const { filter, replacement } = op.replaceOne;
    return { replaceOne: { ...op.replaceOne, filter: viewFilter(kind, filter), replacement: viewReplacement(kind, filter, replacement) } };
  }
  if ('deleteOne' in op) return { deleteOne: { ...op.deleteOne, filter: viewFilter(kind, op.deleteOne.filter) } };
  if ('deleteMany' in op) return { deleteMany: { ...op.deleteMany, filter: viewFilter(kind, op.deleteMany.filter) } };
  throw new Error(`${kind}: unknown bulk write`);
}

function viewReplacement(kind: string, filter: Document, replacement: Document): Document {
  const key = keyOf(kind, { ...equalities(filter), ...replacement });
  if (key === undefined) throw new Error(`${kind}: a replacement without its key`);
  return { ...replacement, _c: kind, _k: key };
}

/** Cursor methods that send a command: the ones that wait for the legacy move. */
const CURSOR_READS = new Set(['toArray', 'next', 'tryNext', 'hasNext', 'forEach', 'explain']);

/**
 * A kind's cursor: its `sort` in `_k` terms (`viewSort`), a `project` that still hides `_c` and `_k`, and until the legacy move is done
 * (`moved`), reads that wait for it first. Builder methods answer the same wrapper.
 */
function viewCursor<C extends object>(kind: string, cursor: C, ready: () => Promise<unknown>, moved: () => boolean): C {
  const proxy: C = new Proxy(cursor, {
    get(target, property, receiver) {
      if (property === Symbol.asyncIterator && !moved())
        return async function* () {
          await ready();
          yield* target as unknown as AsyncIterable<unknown>;
        };
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (typeof property === 'string' && CURSOR_READS.has(property) && !moved())
        return async (...args: unknown[]) => {
          await ready();
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      return (...args: unknown[]) => {
        const given = property === 'sort' ? [viewSort(kind, args[0]), ...args.slice(1)] : property === 'project' ? [viewProjection(args[0] as Document)] : args;
        const out = (value as (...a: unknown[]) => unknown).apply(target, given);
        if (out === target) return proxy;
        return out instanceof AbstractCursor ? viewCursor(kind, out, ready, moved) : out;
      };
    },
  });
  return proxy;
}

/** Every collection method a view answers; any other throws (so nothing reaches `site_config` unfiltered). */
type Method = (...args: any[]) => unknown;
function viewMethods(kind: string, inner: Collection, ready: () => Promise<unknown>, moved: () => boolean): Record<string, Method> {
  const after =
    <A extends unknown[], R>(run: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      await ready();
      return run(...args);
    };
  const cursor = <C extends object>(made: C): C => viewCursor(kind, made, ready, moved);
  return {
    find: (filter?: Document, options?: Document) => cursor(inner.find(viewFilter(kind, filter), viewOptions(kind, options))),
    aggregate: (pipeline: Document[] = [], options?: Document) => cursor(inner.aggregate(viewPipeline(kind, pipeline), options)),
    findOne: after((filter?: Document, options?: Document) => inner.findOne(viewFilter(kind, filter), viewOptions(kind, options))),
    countDocuments: after((filter?: Document, options?: Document) => inner.countDocuments(viewFilter(kind, filter), options)),
    estimatedDocumentCount: after(() => inner.countDocuments({ _c: kind })),
    distinct: after((field: string, filter?: Document, options?: Document) => inner.distinct(field, viewFilter(kind, filter), options ?? {})),
    insertOne: after((doc: Document, options?: Document) => inner.insertOne(viewDocument(kind, doc), options)),
    insertMany: after((docs: Document[], options?: Document) =>
      inner.insertMany(
        docs.map((doc) => viewDocument(kind, doc)),
        options,
      ),
    ),
    updateOne: after((filter: Document, update: Document, options?: Document) =>
      inner.updateOne(viewFilter(kind, filter), viewUpdate(kind, filter, update, !!options?.upsert), options),
    ),
    updateMany: after((filter: Document, update: Document, options?: Document) =>
      inner.updateMany(viewFilter(kind, filter), viewUpdate(kind, filter, update, !!options?.upsert), options),
    ),
    replaceOne: after((filter: Document, replacement: Document, options?: Document) =>
      inner.replaceOne(viewFilter(kind, filter), viewReplacement(kind, filter, replacement), options),
    ),
    deleteOne: after((filter?: Document, options?: Document) => inner.deleteOne(viewFilter(kind, filter), options)),
    deleteMany: after((filter?: Document, options?: Document) => inner.deleteMany(viewFilter(kind, filter), options)),
    findOneAndUpdate: after((filter: Document, update: Document, options?: Document) =>
      inner.findOneAndUpdate(viewFilter(kind, filter), viewUpdate(kind, filter, update, !!options?.upsert), viewOptions(kind, options) as never),
    ),
    findOneAndReplace: after((filter: Document, replacement: Document, options?: Document) =>
      inner.findOneAndReplace(viewFilter(kind, filter), viewReplacement(kind, filter, replacement), viewOptions(kind, options) as never),
    ),
    findOneAndDelete: after((filter: Document, options?: Document) => inner.findOneAndDelete(viewFilter(kind, filter), viewOptions(kind, options) as never)),
    bulkWrite: after((ops: AnyBulkWriteOperation<Document>[], options?: Document) =>
      inner.bulkWrite(
        ops.map((op) => viewBulk(kind, op)),
        options,
      ),
    ),
    // A kind "dropped" (a test's reset, a feature's cleanup) is its documents deleted.
    drop: after(async () => (await inner.deleteMany({ _c: kind }), true)),
    // A kind's indexes are `site_config`'s.
    listIndexes: (...args: unknown[]) => (inner.listIndexes as Method)(...args),
    indexes: (...args: unknown[]) => (inner.indexes as Method)(...args),
    // Made by first-write on `site_config` itself: a kind asks for nothing of its own.
    createIndexes: async () => [],
    createIndex: async () => '',
  };
}

/** The documents of the collections `site_config` replaced, moved into it (docs/footprint.md). */
export async function moveLegacySiteConfig(db: Db, existing: 'kept' | 'replaced' = 'kept'): Promise<{ moved: number; dropped: string[] }> {
  const raw = unviewed(db);
  const present = (await raw.listCollections({ name: { $in: Object.keys(SITE_CONFIG_KINDS) } }, { nameOnly: true }).toArray()).filter((c) =>
    isSiteConfigKind(c.name),
  );
  if (present.length === 0) return { moved: 0, dropped: [] };
  const target = raw.collection(SITE_CONFIG_COLLECTION);
  let moved = 0;
  const dropped: string[] = [];
  for (const { name: kind } of present) {
    const docs = await raw.collection(kind).find({}).toArray();
    const writes = docs.map(({ _id, ...rest }) => {
      const doc = { ...rest, _c: kind, _k: keyOf(kind, { _id, ...rest }) ?? _id };
      // `kept` (a release's upgrade): a document a process moved, then changed, stays; `replaced` (a restore): the archive's wins.
      return existing === 'replaced'
        ? { replaceOne: { filter: { _id }, replacement: doc, upsert: true } }
        : { updateOne: { filter: { _id }, update: { $setOnInsert: doc }, upsert: true } };
    });
    for (let at = 0; at < writes.length; at += 1000) await target.bulkWrite(writes.slice(at, at + 1000), { ordered: false });
    moved += docs.length;
    // Another process may have finished this collection first.
    await dropIfExists(raw.collection(kind));
    dropped.push(kind);
  }
  return { moved, dropped };
}

const RAW = Symbol('site-config raw db');

/** The database below the views: collections by their stored names (backup, restore, placement, index upgrades, the move). */
export const unviewed = (db: Db): Db => (db as unknown as Record<symbol, Db | undefined>)[RAW] ?? db;

export interface SiteConfigViews {
  /** The same database; a config kind's name answers its view of `site_config`. */
  wrap(db: Db): Db;
}

/**
 * The views, and the legacy move before a process first uses `site_config` in a database: until
 * the workspace actor's upgrade step reaches it, a database may still hold the old collections
 * (one `listCollections` per database and process when there is nothing to move).
 */
export function createSiteConfigViews(): SiteConfigViews {
  const moves = new Map<string, { pending: Promise<unknown>; done: boolean }>();
  const ensure = (db: Db) => {
    let move = moves.get(db.databaseName);
    if (!move) {
      const made = { pending: moveLegacySiteConfig(db), done: false };
      made.pending.then(
        () => (made.done = true),
        () => moves.delete(db.databaseName),
      );
      moves.set(db.databaseName, (move = made));
    }
    return move;
  };
  return {
    wrap(db) {
      const views = new Map<string, Collection>();
      const view = (kind: string): Collection => {
        const known = views.get(kind);
        if (known) return known;
        const inner = db.collection(SITE_CONFIG_COLLECTION);
        const methods = viewMethods(
          kind,
          inner,
          () => ensure(db).pending,
          () => ensure(db).done,
        );
        const made = new Proxy(inner, {
          get(target, property, receiver) {
            if (property === 'collectionName') return kind;
            if (typeof property === 'string' && Object.hasOwn(methods, property)) return methods[property];
            const value = Reflect.get(target, property, receiver);
            if (typeof value === 'function') throw new Error(`${kind} (in site_config): ${String(property)} is not supported`);
            return value;
          },
        });
        views.set(kind, made);
        return made;
      };
      return new Proxy(db, {
        get(target, property, receiver) {
          if (property === RAW) return target;
          const value = Reflect.get(target, property, receiver);
          if (property !== 'collection' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
          return (name: string, options?: object) => (isSiteConfigKind(name) ? view(name) : target.collection(name, options));
        },
      });
    },
  };
}
