import type { Db } from 'mongodb';
import type { OperationContext, Services } from '../core/context.ts';
import type { Workspace } from '../core/tenants.ts';
import { startPeriodicPass, type PeriodicPass } from '../core/periodic-pass.ts';
import { QuotaExceededError } from '../core/errors.ts';
import { isDuplicateKey } from '../core/mongo-errors.ts';
import { siteOwnLimit, workspaceLimit } from '../tenancy/quota-model.ts';
import { contentCollections } from './model.ts';
import { siteStateCollection, siteStateId } from '../core/site-state.ts';

/**
 * The `entries` quota and its usage figure, O(1) per write and per read (docs/content.md, "Quota"):
 * one counter document per workspace database (`entries:entries` in `site_state`) holding the live entries of the
 * workspace (`total`) and of each site (`sites.<siteId>`), and the trashed ones (`trashed`).
 *
 * - Under a limit (the workspace's or the site's), an entry becoming live (create, restore) takes
 *   one with a single conditional `$inc` whose filter says "there is still room" and "counted since
 *   the last quota change", so racing writers never pass a limit and a refused one counts nothing.
 * - Under no limit a create counts nothing (the counter would only feed the usage figure, and its
 *   `$inc` was a create's one extra command). Trashing, restoring and purging, rare, always move
 *   the counters (live ↔ trashed), so `total + trashed` equals the entries collection's size
 *   whenever every create was counted.
 * - The usage figure (`entryUsage`) reads the counters and the collection's size (its metadata, no
 *   scan: `estimatedDocumentCount`); they agree unless entries were created uncounted since the
 *   last count, and only then is it recounted (once, then the next reads are O(1) again).
 * - A limit that starts (a quota change moves the workspace's or site's `updatedAt`) finds counters
 *   older than it: the first take recounts them, once (the recount lands only while still older).
 * - The worker's periodic pass (`reconcileEntryCounts`) repairs any drift (a process killed
 *   between a take and its insert; a create with the quotas of before a change racing the recount).
 */
export const ENTRY_COUNTS_ID = siteStateId('entries', 'entries');
const ID = ENTRY_COUNTS_ID;

interface CountsDoc {
  _id: string;
  total: number;
  sites: Record<string, number>;
  trashed: number;
  reconciledAt: Date;
}

const counts = (db: Db) => siteStateCollection<CountsDoc>(db);

/**
 * Recounts the entries of a workspace database and stores the figures. With `unless`, they are
 * stored only if the stored document still matches it (a recount racing another, or takes made
 * since it counted, must not overwrite them); a missing document is always created.
 */
export async function reconcileEntryCounts(db: Db, now = new Date(), unless?: Record<string, unknown>): Promise<CountsDoc> {
  const rows = await contentCollections(db)
    .entries.aggregate<{
      _id: { siteId: string; trashed: boolean };
      n: number;
    }>([{ $group: { _id: { siteId: '$siteId', trashed: { $ne: [{ $ifNull: ['$trashedAt', null] }, null] } }, n: { $sum: 1 } } }])
    .toArray();
  const sites: Record<string, number> = {};
  let total = 0;
  let trashed = 0;
  for (const { _id, n } of rows) {
    sites[_id.siteId] = (sites[_id.siteId] ?? 0) + (_id.trashed ? 0 : n);
    if (_id.trashed) trashed += n;
    else total += n;
  }
  const set = { $set: { total, sites, trashed, reconciledAt: now } };
  try {
    await counts(db).updateOne({ ...unless, _id: ID }, set, { upsert: true });
  } catch (error) {
    // The document exists and no longer matches `unless` (the upsert's insert collided with it), or two first writers counted at once.
    if (!isDuplicateKey(error)) throw error;
    if (!unless) await counts(db).updateOne({ _id: ID }, set);
  }
  return { _id: ID, total, sites, trashed, reconciledAt: now };
}

/** Counters older than `since` (or without a date). */
const olderThan = (since: Date) => ({ $or: [{ reconciledAt: { $lt: since } }, { reconciledAt: { $exists: false } }] });

/** When the limits in force last changed: counters older than that may have missed uncounted creates. */
function limitsSince(ctx: OperationContext): Date {
  return new Date(Math.max(new Date(ctx.workspace.updatedAt).getTime(), new Date(ctx.site.updatedAt).getTime()));
}

/** The site's live entries as counted (0 before the first count): search's collection size, one read by `_id`. */
export async function liveEntryCount(ctx: OperationContext): Promise<number> {
  const doc = await counts(ctx.db).findOne({ _id: ID }, { projection: { [`sites.${ctx.site._id}`]: 1 } });
  return doc?.sites?.[ctx.site._id] ?? 0;
}

/** The counter's filter saying "there is still room" under the site's and the workspace's limits (read from the context: no round trip); `null` when no limit applies. */
function roomFilter(ctx: OperationContext, siteField: string): Record<string, unknown> | null {
  const workspaceMax = workspaceLimit(ctx.workspace.quotas, 'entries');
  const siteMax = siteOwnLimit(ctx.site.quotas, 'entries');
  if (workspaceMax === null && siteMax === null) return null;
  const filter: Record<string, unknown> = { reconciledAt: { $gte: limitsSince(ctx) } };
  if (workspaceMax !== null) filter.total = { $lt: workspaceMax };
  if (siteMax !== null) filter[siteField] = { $not: { $gte: siteMax } };
  return filter;
}

/**
 * One more live entry on this site (`trashed`: −1 for a restore), if the site's and the
 * workspace's limits allow it (403 naming the quota otherwise). Under no limit it cannot refuse.
 */
async function take(ctx: OperationContext, trashed: 0 | -1): Promise<void> {
  const siteField = `sites.${ctx.site._id}`;
  const room = roomFilter(ctx, siteField);
  const inc = { $inc: { total: 1, [siteField]: 1, ...(trashed ? { trashed } : {}) } };
  if (!room) {
    await counts(ctx.db).updateOne({ _id: ID }, inc);
    return;
  }
  for (let attempt = 0; attempt < 3; attempt++) {
    const taken = await counts(ctx.db).updateOne({ ...room, _id: ID }, inc);
    if (taken.matchedCount === 1) return;
    // No counter yet, or counted before the limits changed: count once, then try again.
    const stored = await counts(ctx.db).findOne({ _id: ID }, { projection: { reconciledAt: 1 } });
    const since = limitsSince(ctx);
    if (!stored || !(stored.reconciledAt >= since)) {
      await reconcileEntryCounts(ctx.db, ctx.services.clock.now(), olderThan(since));
      continue;
    }
    // A racing first writer may have created it between our two reads: one more try before refusing.
    if (attempt > 0) break;
  }
  throw new QuotaExceededError('entries');
}

/** A trashed entry restored: one more live entry (under the limits), one trashed fewer. */
export const takeRestoredEntry = (ctx: OperationContext) => take(ctx, -1);

/**
 * Counts the new live entry `insert` lands, then runs `after` (the create's revision and effects).
 * Under a limit: takes one first (a refusal writes nothing), inserts, gives it back if the insert
 * failed. Under none: counts nothing (see above: the usage figure finds the uncounted creates).
 */
export async function countNewEntry<T>(ctx: OperationContext, insert: () => Promise<T>, after: () => Promise<void>): Promise<T> {
  if (!roomFilter(ctx, `sites.${ctx.site._id}`)) {
    const inserted = await insert();
    await after();
    return inserted;
  }
  await take(ctx, 0);
  let inserted: T;
  try {
    inserted = await insert();
  } catch (error) {
    await moveCounts(ctx, { live: -1 });
    throw error;
  }
  await after();
  return inserted;
}

/** Moves the counters by a write that changed them (no room to check): live and trashed entries of this site. */
async function moveCounts(ctx: OperationContext, by: { live?: number; trashed?: number }): Promise<void> {
  const inc: Record<string, number> = {};
  if (by.live) Object.assign(inc, { total: by.live, [`sites.${ctx.site._id}`]: by.live });
  if (by.trashed) inc.trashed = by.trashed;
  await counts(ctx.db).updateOne({ _id: ID }, { $inc: inc });
}

/** A live entry moved to the trash. */
export const countTrashed = (ctx: OperationContext) => moveCounts(ctx, { live: -1, trashed: 1 });
/** A restore that did not land gives back what `takeRestoredEntry` took. */
export const countRestoreUndone = (ctx: OperationContext) => moveCounts(ctx, { live: -1, trashed: 1 });
/** A trashed entry purged for good. */
export const countPurged = (ctx: OperationContext) => moveCounts(ctx, { trashed: -1 });

/**
 * The live entries of a workspace (or of one site) for the usage figures: the kept counters when
 * they account for every entry the collection holds (two O(1) reads), else a recount, stored.
 */
export async function entryUsage(db: Db, siteId: string | null, now = new Date()): Promise<number> {
  const [stored, size] = await Promise.all([counts(db).findOne({ _id: ID }), contentCollections(db).entries.estimatedDocumentCount()]);
  const exact = stored && typeof stored.trashed === 'number' && stored.total + stored.trashed === size;
  // Stored only if no write moved the counters since they were read (a take of a limit in flight keeps its count).
  const unchanged = stored ? { total: stored.total, trashed: stored.trashed ?? { $exists: false }, reconciledAt: stored.reconciledAt } : undefined;
  const figures = exact ? stored : await reconcileEntryCounts(db, now, unchanged);
  return siteId ? (figures.sites[siteId] ?? 0) : figures.total;
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
 * room is still there and that the counters were counted since the limits changed (a racing writer
 * makes it read again; counters older than the limits are recounted first, as for one create). Under no limit nothing is taken
 * (`limited: false`): the caller counts what landed after its insert (`countLanded`), as a create does.
 */
export async function takeEntries(ctx: OperationContext, n: number): Promise<{ granted: number; limited: boolean }> {
  const workspaceMax = workspaceLimit(ctx.workspace.quotas, 'entries');
  const siteMax = siteOwnLimit(ctx.site.quotas, 'entries');
  if (workspaceMax === null && siteMax === null) return { granted: n, limited: false };
  const siteField = `sites.${ctx.site._id}`;
  const since = limitsSince(ctx);
  for (let attempt = 0; attempt < 8 && n > 0; attempt++) {
    let current = await counts(ctx.db).findOne({ _id: ID });
    // No counter yet, or counted before the limits changed (creates under no limit are not counted): count once, as `take` does.
    if (!current || !(current.reconciledAt >= since))
      current = await reconcileEntryCounts(ctx.db, ctx.services.clock.now(), current ? olderThan(since) : undefined);
    const siteNow = current.sites?.[ctx.site._id] ?? 0;
    const room = Math.min(n, workspaceMax === null ? n : workspaceMax - current.total, siteMax === null ? n : siteMax - siteNow);
    if (room <= 0) return { granted: 0, limited: true };
    const filter: Record<string, unknown> = { _id: ID, reconciledAt: { $gte: since } };
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
