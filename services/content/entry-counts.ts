import type { Db } from 'mongodb';
import type { OperationContext, Services } from '../core/context.ts';
import type { Workspace } from '../core/tenants.ts';
import { startPeriodicPass, type PeriodicPass } from '../core/periodic-pass.ts';
import { QuotaExceededError } from '../core/errors.ts';
import { isDuplicateKey } from '../core/mongo-errors.ts';
import { siteOwnLimit, workspaceLimit } from '../tenancy/quota-model.ts';
import { contentCollections } from './model.ts';

/**
 * The `entries` quota, O(1) per write (docs/content.md, "Quota"): one counter document per
 * workspace database (`_id: 'entries'`) holding the live entries of the workspace (`total`) and of
 * each site (`sites.<siteId>`). An entry becoming live (create, restore) takes one with a single
 * conditional `$inc` whose filter says "there is still room", so racing writers never pass a limit
 * and a refused one counts nothing; trashing gives one back. Purging a trashed entry changes
 * nothing (trashed entries are not live). The counters are reconciled from the real rows when the
 * document is missing and by the worker's periodic pass (`reconcileEntryCounts`), which repairs
 * any drift (a process killed between the `$inc` and the insert).
 */
export const ENTRY_COUNTS_COLLECTION = 'entry_counts';
const ID = 'entries';

interface CountsDoc {
  _id: string;
  total: number;
  sites: Record<string, number>;
  reconciledAt: Date;
}

const counts = (db: Db) => db.collection<CountsDoc>(ENTRY_COUNTS_COLLECTION);

/** Recounts the live entries of a workspace database and stores the figures. */
export async function reconcileEntryCounts(db: Db, now = new Date()): Promise<CountsDoc> {
  const rows = await contentCollections(db)
    .entries.aggregate<{ _id: string; n: number }>([{ $match: { trashedAt: null } }, { $group: { _id: '$siteId', n: { $sum: 1 } } }])
    .toArray();
  const sites = Object.fromEntries(rows.map((row) => [row._id, row.n]));
  const total = rows.reduce((sum, row) => sum + row.n, 0);
  const set = { $set: { total, sites, reconciledAt: now } };
  try {
    await counts(db).updateOne({ _id: ID }, set, { upsert: true });
  } catch (error) {
    // Two first writers counting at once: the other's upsert created the document; this count wins too.
    if (!isDuplicateKey(error)) throw error;
    await counts(db).updateOne({ _id: ID }, set);
  }
  return { _id: ID, total, sites, reconciledAt: now };
}

/** The counter's filter saying "there is still room" under the site's and the workspace's limits (read from the context: no round trip); `null` when no limit applies. */
function roomFilter(ctx: OperationContext, siteField: string): Record<string, unknown> | null {
  const workspaceMax = workspaceLimit(ctx.workspace.quotas, 'entries');
  const siteMax = siteOwnLimit(ctx.site.quotas, 'entries');
  if (workspaceMax === null && siteMax === null) return null;
  const filter: Record<string, unknown> = {};
  if (workspaceMax !== null) filter.total = { $lt: workspaceMax };
  if (siteMax !== null) filter[siteField] = { $not: { $gte: siteMax } };
  return filter;
}

/** One more live entry on this site, if the site's and the workspace's limits allow it (403 naming the quota otherwise). */
export async function takeEntry(ctx: OperationContext): Promise<void> {
  const siteField = `sites.${ctx.site._id}`;
  const filter = { ...roomFilter(ctx, siteField), _id: ID };
  for (let attempt = 0; attempt < 3; attempt++) {
    const taken = await counts(ctx.db).updateOne(filter, { $inc: { total: 1, [siteField]: 1 } });
    if (taken.matchedCount === 1) return;
    // No counter yet in this database (or it was dropped): count once, then try again.
    if (!(await counts(ctx.db).findOne({ _id: ID }, { projection: { _id: 1 } }))) {
      await reconcileEntryCounts(ctx.db, ctx.services.clock.now());
      continue;
    }
    // A racing first writer may have created it between our two reads: one more try before refusing.
    if (attempt > 0) break;
  }
  throw new QuotaExceededError('entries');
}

/**
 * Counts the new live entry `insert` lands, then runs `after` (the create's revision and effects).
 * Under a limit: takes one first (a refusal writes nothing), inserts, gives it back if the insert
 * failed. Without one the `$inc` cannot refuse, so it runs after the insert, beside `after` (no
 * round trip added to the create's latency, and a failed insert has counted nothing); a database
 * without counters yet is counted then (the count includes the insert).
 */
export async function countNewEntry<T>(ctx: OperationContext, insert: () => Promise<T>, after: () => Promise<void>): Promise<T> {
  const siteField = `sites.${ctx.site._id}`;
  if (roomFilter(ctx, siteField)) {
    await takeEntry(ctx);
    let inserted: T;
    try {
      inserted = await insert();
    } catch (error) {
      await giveBackEntry(ctx);
      throw error;
    }
    await after();
    return inserted;
  }
  const inserted = await insert();
  const count = async () => {
    try {
      const counted = await counts(ctx.db).updateOne({ _id: ID }, { $inc: { total: 1, [siteField]: 1 } });
      if (counted.matchedCount !== 1) await reconcileEntryCounts(ctx.db, ctx.services.clock.now());
    } catch (error) {
      // The entry landed: a counter that did not move is drift the recount repairs, not a failed create.
      ctx.services.log.warn({ err: error }, 'entry counter not moved; the periodic recount repairs it');
    }
  };
  await Promise.all([count(), after()]);
  return inserted;
}

/** One live entry fewer on this site (trashed, or a create that did not land). */
export async function giveBackEntry(ctx: OperationContext): Promise<void> {
  await counts(ctx.db).updateOne({ _id: ID }, { $inc: { total: -1, [`sites.${ctx.site._id}`]: -1 } });
}

/** Recounts every active workspace's entries (the worker's periodic pass): repairs any drift of the kept counters. */
export async function reconcileAllEntryCounts(services: Services): Promise<number> {
  let n = 0;
  for await (const workspace of services.platformDb.collection<Workspace>('workspaces').find({ status: 'active' }, { projection: { _id: 1, dbName: 1 } })) {
    await reconcileEntryCounts(services.workspaceDb(workspace), services.clock.now());
    n++;
  }
  return n;
}

/** Runs the recount in the worker: at boot, then every `intervalMs`. Stops with the MongoDB client. */
export function startEntryCountReconciler(services: Services, intervalMs = 10 * 60_000): PeriodicPass {
  const pass = startPeriodicPass('entry counts', intervalMs, services.log, () => reconcileAllEntryCounts(services));
  services.mongo.once('topologyClosed', () => void pass.stop());
  return pass;
}

/**
 * Takes up to `n` live entries at once (a bulk create, the content import): as many as the site's
 * and the workspace's limits leave room for, with one conditional `$inc` whose filter says that
 * room is still there (a racing writer makes it read again). Under no limit nothing is taken
 * (`limited: false`): the caller counts what landed after its insert (`countLanded`), as a create does.
 */
export async function takeEntries(ctx: OperationContext, n: number): Promise<{ granted: number; limited: boolean }> {
  const workspaceMax = workspaceLimit(ctx.workspace.quotas, 'entries');
  const siteMax = siteOwnLimit(ctx.site.quotas, 'entries');
  if (workspaceMax === null && siteMax === null) return { granted: n, limited: false };
  const siteField = `sites.${ctx.site._id}`;
  for (let attempt = 0; attempt < 8 && n > 0; attempt++) {
    const current = (await counts(ctx.db).findOne({ _id: ID })) ?? (await reconcileEntryCounts(ctx.db, ctx.services.clock.now()));
    const siteNow = current.sites?.[ctx.site._id] ?? 0;
    const room = Math.min(n, workspaceMax === null ? n : workspaceMax - current.total, siteMax === null ? n : siteMax - siteNow);
    if (room <= 0) return { granted: 0, limited: true };
    const filter: Record<string, unknown> = { _id: ID };
    if (workspaceMax !== null) filter.total = { $lte: workspaceMax - room };
    if (siteMax !== null) filter[siteField] = { $not: { $gt: siteMax - room } };
    const taken = await counts(ctx.db).updateOne(filter, { $inc: { total: room, [siteField]: room } });
    if (taken.matchedCount === 1) return { granted: room, limited: true };
  }
  return { granted: 0, limited: true };
}

/** Moves the live count by `delta`: entries a bulk create landed under no limit (+), or taken ones that did not land (−). */
export async function countLanded(ctx: OperationContext, delta: number): Promise<void> {
  if (delta === 0) return;
  const counted = await counts(ctx.db).updateOne({ _id: ID }, { $inc: { total: delta, [`sites.${ctx.site._id}`]: delta } });
  // No counter yet: the recount includes what just landed.
  if (counted.matchedCount !== 1) await reconcileEntryCounts(ctx.db, ctx.services.clock.now());
}
