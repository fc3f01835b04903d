import type { OperationContext } from '../core/context.ts';
import type { termRemovalWorkflow } from '../../workflows/term-removal.ts';
import { termRemovalWorkflowId, termRemovalWorkflowType, type TermRemovalInput, type TermRemovalTarget } from '../../workflows/contracts/term-removal.ts';
import { checkEntriesInScope } from './write-path.ts';
import { BATCH, finishTermRemoval, plan, recordTermRemovalJob, removeTermBatch } from './term-removal.ts';

// Apart from term-removal.ts (the batches the activities run) because it types the job's start with
// the workflow itself: activities → term-removal → workflow would be a cycle.

/** Above this many entries a deletion runs as a Temporal job (durable, resumable); below, inline. */
export const INLINE_LIMIT = 100;
/** How long the operation waits for a job before answering `deleted: false` (it goes on). */
const JOB_WAIT_MS = 20_000;

/**
 * Deletes a term or a custom taxonomy with everything that uses it. Refused (the generic 401, with
 * nothing written) when any entry that has it, live or trashed, is outside the caller's key scope.
 * Up to INLINE_LIMIT entries: the batches run here. More: one Temporal job (`termRemovalWorkflow`,
 * a repeated deletion joins it), awaited for JOB_WAIT_MS; the same batch and finish functions.
 */
export async function removeTerm(ctx: OperationContext, target: TermRemovalTarget): Promise<{ deleted: boolean; entriesChanged: number; job: string | null }> {
  const { filter } = plan(target);
  const affected = await checkEntriesInScope(ctx, filter);
  if (affected <= INLINE_LIMIT) {
    let entriesChanged = 0;
    for (;;) {
      const { found, changed } = await removeTermBatch(ctx, target, BATCH);
      entriesChanged += changed;
      if (found < BATCH) break;
    }
    await finishTermRemoval(ctx, target);
    return { deleted: true, entriesChanged, job: null };
  }
  const { client, taskQueue } = ctx.services.temporal;
  const workflowId = termRemovalWorkflowId(ctx.workspace._id, ctx.site._id, target.taxonomy, target.termId);
  const input: TermRemovalInput = { ...target, workspaceId: ctx.workspace._id, siteId: ctx.site._id, batch: BATCH };
  // Recorded first: a start that fails leaves a record whose stop finds nothing to stop (harmless).
  await recordTermRemovalJob(ctx, workflowId);
  const handle = await client.workflow.start<typeof termRemovalWorkflow>(termRemovalWorkflowType, {
    taskQueue,
    workflowId,
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [input],
  });
  let timer: NodeJS.Timeout | undefined;
  // A job that ends without its outcome (terminated: its workspace is being deleted) did not finish the deletion.
  const finished = handle.result().catch(() => null);
  const outcome = await Promise.race([finished, new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), JOB_WAIT_MS)))]).finally(() =>
    clearTimeout(timer),
  );
  return outcome ? { deleted: true, entriesChanged: outcome.entriesChanged, job: workflowId } : { deleted: false, entriesChanged: 0, job: workflowId };
}
