import type { Db, Filter } from 'mongodb';
import type { OperationContext } from '../core/context.ts';
import type { TermRemovalTarget } from '../../workflows/contracts/term-removal.ts';
import { COLLECTIONS, type EntryDoc } from './model.ts';
import { taxonomyCollections } from './taxonomies.ts';
import { changeEntriesMatching, changeTrashedEntries, settleOwed, type Compute } from './write-path.ts';

/** Entries per batch (one activity of the job). */
export const BATCH = 100;

export function plan(target: TermRemovalTarget): { filter: Filter<EntryDoc>; compute: Compute; trashed: Record<string, unknown>; note: string } {
  const field = `terms.${target.taxonomy}`;
  const { taxonomy, termId } = target;
  if (termId) {
    return {
      filter: { [field]: termId },
      compute: (current) =>
        current.terms?.[taxonomy]?.includes(termId) ? { terms: { ...current.terms, [taxonomy]: current.terms[taxonomy]!.filter((t) => t !== termId) } } : null,
      trashed: { $pull: { [field]: termId } },
      note: `term ${target.label} deleted`,
    };
  }
  return {
    filter: { [field]: { $exists: true } },
    compute: (current) => {
      if (!current.terms || !(taxonomy in current.terms)) return null;
      const { [taxonomy]: _removed, ...rest } = current.terms;
      return { terms: rest };
    },
    trashed: { $unset: { [field]: '' } },
    note: `taxonomy ${target.label} deleted`,
  };
}

/**
 * One batch of a term's removal: up to `limit` live entries that still have it, each through the
 * write path (version, revision noting the deletion, `content.updated`); when fewer are left, the
 * trashed entries too (not public: no announcement). Idempotent: a changed entry no longer matches.
 */
export async function removeTermBatch(
  ctx: OperationContext,
  target: TermRemovalTarget,
  limit: number,
  progress?: () => void,
): Promise<{ found: number; changed: number }> {
  const { filter, compute, trashed, note } = plan(target);
  // First what a batch cut short by a crash still owes (its entries no longer match the filter).
  await settleOwed(ctx, { 'pending.note': note }, limit);
  const result = await changeEntriesMatching(ctx, filter, limit, compute, () => ({ events: ['content.updated'], note, durable: true }), progress);
  if (result.found < limit) {
    await changeTrashedEntries(ctx, filter, trashed);
  }
  return result;
}

/** The last step, once no entry has the term: children move up to its parent, then the term (or the taxonomy and its terms) goes. Idempotent. */
export async function finishTermRemoval(ctx: OperationContext, target: TermRemovalTarget): Promise<void> {
  const { taxonomies, terms } = taxonomyCollections(ctx);
  if (target.termId) {
    const term = await terms.findOne({ _id: target.termId, siteId: ctx.site._id });
    if (!term) return;
    await terms.updateMany({ siteId: ctx.site._id, taxonomy: target.taxonomy, parentId: term._id }, { $set: { parentId: term.parentId } });
    await terms.deleteOne({ _id: term._id, siteId: ctx.site._id });
    return;
  }
  await terms.deleteMany({ siteId: ctx.site._id, taxonomy: target.taxonomy });
  await taxonomies.deleteOne({ siteId: ctx.site._id, slug: target.taxonomy });
}

/**
 * The jobs of a workspace database that may still run, by workflow id: recorded before a job
 * starts, forgotten when it has finished (its last activity), so a workspace deletion finds every
 * one to stop (`stopTermRemovals`) without asking Temporal's visibility, which lags behind a start.
 */
interface JobRow {
  _id: string;
  startedAt: Date;
}
const jobs = (db: Db) => db.collection<JobRow>(COLLECTIONS.jobs);

/** Records a job about to start (term-removal-job.ts). */
export async function recordTermRemovalJob(ctx: OperationContext, workflowId: string): Promise<void> {
  await jobs(ctx.db).updateOne({ _id: workflowId }, { $setOnInsert: { startedAt: ctx.services.clock.now() } }, { upsert: true });
}

/** Forgets a finished job (the workflow's last activity). */
export async function forgetTermRemovalJob(db: Db, workflowId: string): Promise<void> {
  await jobs(db).deleteOne({ _id: workflowId });
}

/** The workflow ids of the jobs recorded in a workspace database (running, or ended without their last activity). */
export async function recordedTermRemovalJobs(db: Db): Promise<string[]> {
  return (
    await jobs(db)
      .find({}, { projection: { _id: 1 } })
      .toArray()
  ).map((row) => row._id);
}
