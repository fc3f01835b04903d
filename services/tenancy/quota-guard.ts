import type { Db } from 'mongodb';
import type { Services } from '../core/context.ts';
import { FeatureDisabledError, QuotaExceededError, ServiceUnavailableError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import type { Site, Workspace } from '../core/tenants.ts';
import { siteOwnLimit, switchOn, workspaceLimit, type LimitName, type SwitchName } from './quota-model.ts';
import { siteStateCollection, siteStateId, siteStateKindRange } from '../core/site-state.ts';

/**
 * Enforcement of the platform quotas inside the operations (docs/platform.md).
 *
 * Counted limits (sites, users, entries, API keys, webhook endpoints) are exact under concurrency
 * without transactions: while a limit is set, creates of that kind in one workspace run one at a
 * time behind a short lease (a `lock:…` document of `site_state`), each counting the real rows before it inserts. The
 * count is the truth (no counter to drift when rows are deleted by any path), and the lease costs
 * nothing while no limit is set. A lease of a process that died expires after LEASE_MS.
 *
 * Window limits (requests per minute, export runs per day) are conditional `$inc`s on one counter
 * per window (`quota:…` documents of `site_state`): the filter says "there is still room", so racing calls can never
 * push it past the limit and refused calls do not count.
 */
export interface QuotaScope {
  services: Services;
  workspace: Workspace;
  /** Null for workspace-level operations (adding a site). */
  site: Site | null;
}

export type CountedLimit = Extract<LimitName, 'sites' | 'users' | 'entries' | 'apiKeys' | 'webhookEndpoints'>;

const LEASE_MS = 10_000;
const WAIT_MS = 15_000;

interface LockDoc {
  _id: string;
  holder: string;
  until: Date;
}

interface CounterDoc {
  _id: string;
  n: number;
  expiresAt: Date;
}

const dbOf = (scope: QuotaScope): Db => scope.services.workspaceDb(scope.workspace);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function assertSwitch(scope: Pick<QuotaScope, 'workspace' | 'site'>, name: SwitchName): void {
  if (!switchOn(scope.workspace.quotas, scope.site?.quotas, name)) throw new FeatureDisabledError(name);
}

export const isSwitchOn = (scope: Pick<QuotaScope, 'workspace' | 'site'>, name: SwitchName) => switchOn(scope.workspace.quotas, scope.site?.quotas, name);

async function acquire(db: Db, name: string, holder: string): Promise<void> {
  const locks = siteStateCollection<LockDoc>(db);
  const deadline = Date.now() + WAIT_MS;
  for (let attempt = 0; ; attempt++) {
    const now = new Date();
    try {
      // Matches a free (expired) lease, or inserts one; a live lease makes the upsert a duplicate key.
      await locks.updateOne(
        { _id: siteStateId('lock', name), until: { $lt: now } },
        { $set: { holder, until: new Date(now.getTime() + LEASE_MS) } },
        { upsert: true },
      );
      const held = await locks.findOne({ _id: siteStateId('lock', name) }, { projection: { holder: 1 } });
      if (held?.holder === holder) return;
    } catch (error) {
      if ((error as { code?: number }).code !== 11000) throw error;
    }
    if (Date.now() > deadline) throw new ServiceUnavailableError('Quota check busy, try again');
    await sleep(5 + Math.random() * Math.min(50, 5 * (attempt + 1)));
  }
}

async function release(db: Db, name: string, holder: string): Promise<void> {
  await siteStateCollection<LockDoc>(db).deleteOne({ _id: siteStateId('lock', name), holder });
}

/**
 * Runs `create` only if one more row of `name` fits the site's and the workspace's limits; 403
 * naming the quota otherwise. `count(siteId, bound)` counts the live rows of one site, or of the
 * whole workspace when given null, up to `bound` (the limit: `countDocuments(filter, { limit: bound })`),
 * so the check reads at most as many rows as the quota allows, never the whole collection.
 */
export async function withinCountQuota<T>(
  scope: QuotaScope,
  name: CountedLimit,
  count: (siteId: string | null, bound: number) => Promise<number>,
  create: () => Promise<T>,
): Promise<T> {
  const workspaceMax = workspaceLimit(scope.workspace.quotas, name);
  const siteMax = scope.site ? siteOwnLimit(scope.site.quotas, name) : null;
  if (workspaceMax === null && siteMax === null) return create();
  const db = dbOf(scope);
  const lock = `count:${name}`;
  const holder = newId();
  await acquire(db, lock, holder);
  try {
    if (workspaceMax !== null && (await count(null, workspaceMax)) >= workspaceMax) throw new QuotaExceededError(name);
    if (siteMax !== null && scope.site && (await count(scope.site._id, siteMax)) >= siteMax) throw new QuotaExceededError(name);
    return await create();
  } finally {
    await release(db, lock, holder);
  }
}

async function take(db: Db, id: string, limit: number, expiresAt: Date): Promise<boolean> {
  const counters = siteStateCollection<CounterDoc>(db);
  const taken = await counters.updateOne({ _id: id, n: { $lt: limit } }, { $inc: { n: 1 } });
  if (taken.modifiedCount === 1) return true;
  if (limit <= 0) return false;
  // No counter yet for this window: create it at 1 (a racing creator's duplicate retries the $inc).
  try {
    await counters.insertOne({ _id: id, n: 1, expiresAt });
    await counters.deleteMany({ ...siteStateKindRange('quota'), expiresAt: { $lt: new Date(expiresAt.getTime() - 2 * 86_400_000) } });
    return true;
  } catch (error) {
    if ((error as { code?: number }).code !== 11000) throw error;
    const again = await counters.updateOne({ _id: id, n: { $lt: limit } }, { $inc: { n: 1 } });
    return again.modifiedCount === 1;
  }
}

async function giveBack(db: Db, id: string): Promise<void> {
  await siteStateCollection<CounterDoc>(db).updateOne({ _id: id, n: { $gt: 0 } }, { $inc: { n: -1 } });
}

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;
export const windowStart = (now: Date, size: number) => Math.floor(now.getTime() / size) * size;
export const rpmCounterId = (window: number) => siteStateId('quota', `rpm:${window}`);
export const exportCounterId = (siteId: string | null, window: number) => siteStateId('quota', `export:${siteId ?? 'workspace'}:${window}`);

/** One request against the workspace's `requestsPerMinute` (all keys and the public API); 429 over it. */
export async function countRequest(scope: QuotaScope, now: Date): Promise<void> {
  const limit = workspaceLimit(scope.workspace.quotas, 'requestsPerMinute');
  if (limit === null) return;
  const window = windowStart(now, MINUTE_MS);
  if (!(await take(dbOf(scope), rpmCounterId(window), limit, new Date(window + MINUTE_MS)))) {
    throw new QuotaExceededError('requestsPerMinute', 429, (window + MINUTE_MS - now.getTime()) / 1000);
  }
}

/**
 * One export run against `exportRunsPerDay` (UTC days) of the site and of the workspace; 429 over.
 * Runs are counted even with no limit set (one write per run), so usage reports are true.
 */
export async function countExportRun(scope: QuotaScope & { site: Site }, now: Date): Promise<void> {
  const window = windowStart(now, DAY_MS);
  const retry = (window + DAY_MS - now.getTime()) / 1000;
  const db = dbOf(scope);
  const workspaceMax = workspaceLimit(scope.workspace.quotas, 'exportRunsPerDay') ?? Number.MAX_SAFE_INTEGER;
  const siteMax = siteOwnLimit(scope.site.quotas, 'exportRunsPerDay') ?? Number.MAX_SAFE_INTEGER;
  const expires = new Date(window + DAY_MS);
  if (!(await take(db, exportCounterId(null, window), workspaceMax, expires))) {
    throw new QuotaExceededError('exportRunsPerDay', 429, retry);
  }
  if (!(await take(db, exportCounterId(scope.site._id, window), siteMax, expires))) {
    await giveBack(db, exportCounterId(null, window));
    throw new QuotaExceededError('exportRunsPerDay', 429, retry);
  }
}

/** The value of a window counter (usage reports). */
export async function counterValue(db: Db, id: string): Promise<number> {
  return (await siteStateCollection<CounterDoc>(db).findOne({ _id: id }))?.n ?? 0;
}
