import type { Collection, Db, Document } from 'mongodb';
import { DOCUMENT_WRITES } from './write-watch.ts';
import { dropIfExists } from './mongo-errors.ts';

/**
 * The small state documents of a workspace, one collection for all of them (issue 24, a lean
 * footprint: each collection is a file with its own index, and these held one to a few documents
 * each). A document's `_id` is `<kind>:<key>`, where `key` is what identified it in the collection
 * it used to have (a site id, `entries`, `site:<siteId>`, `rpm:<window>`, ...): every read and
 * write stays a point lookup on `_id`, and a kind's documents are one `_id` range.
 */
export const SITE_STATE_COLLECTION = 'site_state';

/** Each kind, and the collection its documents lived in before they shared this one. */
export const SITE_STATE_KINDS = {
  /** Site settings, key settings, access version, per-key rate counters (`access/site-settings-store.ts`). */
  settings: 'site_settings',
  /** The site's languages and default (`languages/languages.ts`). */
  languages: 'site_languages',
  /** The cookie registry (`cookies/cookies.ts`). */
  cookies: 'site_cookies',
  /** The active and installed themes (`plugins/themes.ts`). */
  theme: 'site_theme',
  /** The public generation every public cache is keyed on (`core/public-generation.ts`). */
  content: 'content_state',
  /** The kept entry counters of the workspace (`content/entry-counts.ts`). */
  entries: 'entry_counts',
  /** Media bytes used, per site and for the workspace (`media/quota.ts`). */
  media: 'media_usage',
  /** Counted quota windows and the retention pass's state (`tenancy/quota-guard.ts`, `platform/retention.ts`). */
  quota: 'quota_counters',
  /** Leases held while a counted quota is checked (`tenancy/quota-guard.ts`). */
  lock: 'quota_locks',
  /** The static export's served output and running run (`export/model.ts`). */
  export: 'export_state',
  /** The static export's run history, at most RUN_HISTORY per site (`export/model.ts`). */
  runs: 'export_runs',
} as const;

export type SiteStateKind = keyof typeof SITE_STATE_KINDS;

export const siteStateId = (kind: SiteStateKind, key: string) => `${kind}:${key}`;

/** `_id` filter: every document of one kind. */
export const siteStateKindRange = (kind: SiteStateKind) => ({ _id: { $gte: `${kind}:`, $lt: `${kind};` } });

export const siteStateCollection = <T extends Document = Document>(db: Db): Collection<T> => db.collection<T>(SITE_STATE_COLLECTION);

/** The collections whose documents moved into `site_state`, by the kind they became. */
const LEGACY: ReadonlyArray<readonly [SiteStateKind, string]> = Object.entries(SITE_STATE_KINDS) as Array<[SiteStateKind, string]>;

/**
 * Moves the documents of the collections `site_state` replaced into it, then drops those
 * collections (docs/footprint.md). Idempotent and resumable: a document already moved is skipped
 * (`existing: 'kept'`) or written again (`'replaced'`), a collection is dropped only after every
 * document of it was written, and a move cut short is finished by the next one.
 *
 * - `kept` (a release's upgrade): a document another process already moved, then changed, stays;
 * - `replaced` (a restore of a backup taken before the merge): the archive's documents win.
 */
export async function moveLegacySiteState(db: Db, existing: 'kept' | 'replaced' = 'kept'): Promise<{ moved: number; dropped: string[] }> {
  const names = new Set(LEGACY.map(([, name]) => name));
  const present = await db.listCollections({ name: { $in: [...names] } }, { nameOnly: true }).toArray();
  if (present.length === 0) return { moved: 0, dropped: [] };
  const target = siteStateCollection<{ _id: string }>(db);
  let moved = 0;
  const dropped: string[] = [];
  for (const [kind, name] of LEGACY) {
    if (!present.some((c) => c.name === name)) continue;
    const docs = await db.collection(name).find({}).toArray();
    // A document holding nothing but its `_id` says nothing its absence does not.
    const writes = docs
      .filter((doc) => Object.keys(doc).length > 1)
      .map(({ _id, ...rest }) => {
        const id = siteStateId(kind, String(_id));
        return existing === 'replaced'
          ? { replaceOne: { filter: { _id: id }, replacement: rest, upsert: true } }
          : { updateOne: { filter: { _id: id }, update: { $setOnInsert: rest }, upsert: true } };
      });
    if (writes.length > 0) await target.bulkWrite(writes, { ordered: false });
    moved += docs.length;
    // Another process may have finished this collection first.
    await dropIfExists(db.collection(name));
    dropped.push(name);
  }
  return { moved, dropped };
}

/** Collection methods that answer a promise: the ones `site_state` handles wait on the move for. */
const PROMISED: ReadonlySet<string> = new Set([...DOCUMENT_WRITES, 'findOne', 'countDocuments', 'distinct']);

export interface SiteStateMoves {
  /** The same database; the first use of `site_state` in this process waits for the legacy move. */
  wrap(db: Db): Db;
}

/**
 * Between a release and the workspace actor's upgrade step (the reconciler hands those out a
 * hundred a minute), a database may still hold the old collections: the first use of `site_state`
 * in a process moves them first (one `listCollections` per database and process when there is
 * nothing to move), so no read ever answers a default where a document exists. Cursor methods
 * (`find`, `aggregate`) are not waited on: `site_state` is read by `_id` only.
 */
export function createSiteStateMoves(): SiteStateMoves {
  const done = new Map<string, Promise<unknown>>();
  const ensure = (db: Db) => {
    let pending = done.get(db.databaseName);
    if (!pending) {
      pending = moveLegacySiteState(db);
      done.set(db.databaseName, pending);
      pending.catch(() => done.delete(db.databaseName));
    }
    return pending;
  };
  return {
    wrap(db) {
      return new Proxy(db, {
        get(target, property, receiver) {
          const value = Reflect.get(target, property, receiver);
          if (property !== 'collection' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
          return (name: string, options?: object) => {
            const collection = target.collection(name, options);
            if (name !== SITE_STATE_COLLECTION) return collection;
            return new Proxy(collection, {
              get(c, p, r) {
                const method = Reflect.get(c, p, r);
                if (typeof method !== 'function') return method;
                if (typeof p !== 'string' || !PROMISED.has(p)) return method.bind(c);
                return (...args: unknown[]) => ensure(target).then(() => (method as (...a: unknown[]) => unknown).apply(c, args));
              },
            });
          };
        },
      });
    },
  };
}
