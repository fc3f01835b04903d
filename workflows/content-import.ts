import { ActivityFailure, continueAsNew, proxyActivities } from '@temporalio/workflow';
import type * as activities from '../activities/content-import.ts';
import type { ContentImportInput, ContentImportOutcome } from './contracts/content-import.ts';

type Activities = ReturnType<typeof activities.createContentImportActivities>;

const { importContentBatch } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
});
const { failContentImport } = proxyActivities<Activities>({ startToCloseTimeout: '1 minute' });

/** Activities (each a span of batches) per run before the history is started afresh (continue-as-new). */
const BATCHES_PER_RUN = 500;

/**
 * Imports a stored NDJSON file in batches, as many per activity as fit in its span. Each batch
 * starts at the import's checkpoint and moves it, so a worker killed at any point resumes where the
 * last finished batch left off; a batch cut short is repeated, and finds its own writes done
 * (entries keyed by locale and slug). Cancel is a flag on the import read before each batch. A batch
 * failing past its retries fails the import.
 */
export async function contentImportWorkflow(input: ContentImportInput): Promise<ContentImportOutcome> {
  for (let round = 0; round < BATCHES_PER_RUN; round++) {
    try {
      const step = await importContentBatch(input);
      if (step.done) return { state: step.state };
    } catch (error) {
      const message = error instanceof ActivityFailure ? (error.cause?.message ?? error.message) : String(error);
      await failContentImport(input, message);
      return { state: 'failed' };
    }
  }
  return continueAsNew<typeof contentImportWorkflow>(input);
}
