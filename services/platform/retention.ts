import type { Db } from 'mongodb';
import { createContext, type Services } from '../core/context.ts';
import { RETENTION_KINDS, type RetentionKind, type RetentionRules } from '../core/feature.ts';
import { startPeriodicPass, type PeriodicPass } from '../core/periodic-pass.ts';
import { systemPrincipal } from '../core/principal.ts';
import type { Workspace } from '../core/tenants.ts';
import { platformCollections } from '../tenancy/platform-db.ts';
import { retentionRules } from '../tenancy/retention-model.ts';
import { QUOTA_COUNTERS } from '../tenancy/quota-guard.ts';
import { purgeLapsedPlatformRows } from '../audit/retention.ts';
import { DEFAULT_RETENTION_DAYS } from '../audit/rows.ts';

/** Rows of each kind a pass removes (or a scan reads) per site at most; the rest waits for the next pass. */
export const RETENTION_BUDGET = 10_000;
const PASS_EVERY_MS = 5 * 60_000;

/**
 * What retention keeps in a workspace database: one document in its `quota_counters` (`_id:
 * "retention"`), read by `_id`. `freed` is what it removed since the workspace exists (the usage's
 * `retention.freed`); `resume` where each feature's scan of each site stopped (`RetentionRun.resumeFrom`).
 */
interface RetentionStateDoc {
  _id: 'retention';
  freed?: Partial<Record<RetentionKind, number>>;
  lastFreedAt?: Date;
  resume?: Record<string, Record<string, Record<string, unknown>>>;
}
const stateOf = (db: Db) => db.collection<RetentionStateDoc>(QUOTA_COUNTERS);

export type RetentionFigures = Record<RetentionKind, number>;
const zero = (): RetentionFigures => Object.fromEntries(RETENTION_KINDS.map((kind) => [kind, 0])) as RetentionFigures;

/** A workspace's rules in force: its `retention` quota over the defaults, and its audit rows' own days. */
export const workspaceRetentionRules = (workspace: Workspace): RetentionRules =>
  retentionRules(workspace.quotas, workspace.auditRetentionDays ?? DEFAULT_RETENTION_DAYS);

/** What retention has freed in a workspace, and when it last freed something (the usage's `retention`). */
export async function retentionFreed(db: Db): Promise<{ freed: RetentionFigures; lastFreedAt: Date | null }> {
  const state = await stateOf(db).findOne({ _id: 'retention' }, { projection: { freed: 1, lastFreedAt: 1 } });
  const freed = zero();
  for (const kind of RETENTION_KINDS) freed[kind] = state?.freed?.[kind] ?? 0;
  return { freed, lastFreedAt: state?.lastFreedAt ?? null };
}

/**
 * One workspace's share of a pass: every site, every feature's `retention` hook under the
 * workspace's rules, then what was freed and where the scans stopped, in one write. A workspace
 * whose writes are held for a backup (docs/backups.md) is left alone: a trash purge is several
 * writes, which a snapshot must not cut in half; the hold is read again before each site.
 */
async function workspacePass(services: Services, first: Workspace, now: Date, budget: number): Promise<RetentionFigures> {
  const { workspaces, sites } = platformCollections(services);
  const db = services.workspaceDb(first);
  const state = await stateOf(db).findOne({ _id: 'retention' }, { projection: { resume: 1 } });
  const removed = zero();
  const resume: NonNullable<RetentionStateDoc['resume']> = {};
  for await (const site of sites.find({ workspaceId: first._id })) {
    const workspace = await workspaces.findOne({ _id: first._id });
    if (!workspace || workspace.writeHold || (workspace.status !== 'active' && workspace.status !== 'suspended')) break;
    const rules = workspaceRetentionRules(workspace);
    const ctx = createContext(services, { workspace, site }, systemPrincipal('retention'), { id: `retention:${site._id}`, ip: '127.0.0.1' });
    for (const feature of services.features) {
      if (!feature.retention) continue;
      const result = await feature.retention(ctx, { rules, now, budget, resumeFrom: state?.resume?.[site._id]?.[feature.name] ?? null });
      for (const kind of RETENTION_KINDS) removed[kind] += result.removed[kind] ?? 0;
      if (result.resumeAt) (resume[site._id] ??= {})[feature.name] = result.resumeAt;
    }
  }
  const freedAny = RETENTION_KINDS.some((kind) => removed[kind] > 0);
  if (freedAny || JSON.stringify(resume) !== JSON.stringify(state?.resume ?? {})) {
    const inc = Object.fromEntries(RETENTION_KINDS.filter((kind) => removed[kind] > 0).map((kind) => [`freed.${kind}`, removed[kind]]));
    await stateOf(db).updateOne(
      { _id: 'retention' },
      { $set: { resume, ...(freedAny ? { lastFreedAt: now } : {}) }, ...(freedAny ? { $inc: inc } : {}) },
      { upsert: true },
    );
  }
  return removed;
}

/**
 * The retention pass (docs/platform.md, "Retention"): for every active or suspended workspace, what
 * its rules say is due (finished deliveries and their attempts, audit rows, old revisions, the old
 * trash), at most `budget` of each kind per site, resumed where the last pass stopped; then the
 * platform's own audit rows past their year. Counts the rows removed by kind
 * (`cwb_retention_removed_total`) and answers them.
 */
export async function runRetentionPass(services: Services, options: { budget?: number } = {}): Promise<RetentionFigures> {
  const budget = options.budget ?? RETENTION_BUDGET;
  const now = services.clock.now();
  const totals = zero();
  for await (const workspace of platformCollections(services).workspaces.find({ status: { $in: ['active', 'suspended'] } })) {
    if (workspace.writeHold) continue;
    const removed = await workspacePass(services, workspace, now, budget);
    for (const kind of RETENTION_KINDS) totals[kind] += removed[kind];
  }
  totals.audit += await purgeLapsedPlatformRows(services.platformDb, now, budget);
  for (const kind of RETENTION_KINDS) if (totals[kind] > 0) services.metrics.retentionRemoved.inc({ kind }, totals[kind]);
  return totals;
}

/** Runs the pass in the worker: at boot, then every five minutes. Stops with the MongoDB client. */
export function startRetention(services: Services, intervalMs = PASS_EVERY_MS): PeriodicPass {
  const pass = startPeriodicPass('retention', intervalMs, services.log, () => runRetentionPass(services));
  services.mongo.once('topologyClosed', () => void pass.stop());
  return pass;
}
