import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import type * as activities from '../activities/term-removal.ts';
import type { TermRemovalInput, TermRemovalOutcome } from './contracts/term-removal.ts';

const { removeTermFromEntries, finishTermRemoval } = proxyActivities<ReturnType<typeof activities.createTermRemovalActivities>>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/** Batches per run before the history is started afresh (continue-as-new). */
const BATCHES_PER_RUN = 500;

/**
 * Removes a term (or a taxonomy) from every entry that has it, one idempotent batch per activity
 * (each entry through the write path: version, revision, `content.updated`), then deletes the term.
 * A worker killed at any point resumes from the entries that still have the term: an entry already
 * changed no longer matches, so nothing is changed twice and the end state is the same.
 */
export async function termRemovalWorkflow(input: TermRemovalInput): Promise<TermRemovalOutcome> {
  let changed = input.changedSoFar ?? 0;
  for (let round = 0; round < BATCHES_PER_RUN; round++) {
    const { found, changed: n } = await removeTermFromEntries(input);
    changed += n;
    if (found < input.batch) {
      await finishTermRemoval(input);
      return { entriesChanged: changed };
    }
  }
  return continueAsNew<typeof termRemovalWorkflow>({ ...input, changedSoFar: changed });
}
