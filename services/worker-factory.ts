import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import type { Services } from './core/context.ts';
import { createActivities } from '../activities/index.ts';
import { startDeliveryRecovery } from './events/recovery.ts';
import { startWorkspaceReconciler } from './platform/lifecycle-reconciler.ts';
import { startAccessRetention } from './access/retention.ts';
import { startMailDrain } from './mail/drain.ts';
import { startEntryCountReconciler } from './content/entry-counts.ts';
import { startSearchBackfill } from './content/search-index.ts';

export const workflowsPath = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export interface WorkerFactoryOptions {
  /** A prebuilt bundle (tests bundle once); otherwise the worker bundles `workflows/index.ts`. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  taskQueue?: string;
}

/** A Temporal worker running every workflow and activity against these services. */
export async function createWorker(services: Services, options: WorkerFactoryOptions = {}) {
  const connection = await NativeConnection.connect({ address: services.config.TEMPORAL_ADDRESS });
  const worker = await Worker.create({
    connection,
    namespace: services.config.TEMPORAL_NAMESPACE,
    taskQueue: options.taskQueue ?? services.temporal.taskQueue,
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath }),
    activities: createActivities(services),
    // Activities get this long to finish when the worker is asked to stop; the rest go back to the server.
    shutdownGraceTime: '10 seconds',
  });
  // The worker owns the webhook queue: re-queue what a crash interrupted, then drain every minute.
  // It stops by itself when the services' MongoDB client closes.
  const delivery = startDeliveryRecovery(services);
  // ...and finishes workspace lifecycle steps whose gateway died before the actor got them.
  const reconciler = startWorkspaceReconciler(services);
  // ...and drops expired failure audit rows and rate counters (the local engine runs no TTL index).
  const retention = startAccessRetention(services);
  // ...and recounts the kept entry counters of the `entries` quota (content/entry-counts.ts).
  const entryCounts = startEntryCountReconciler(services);
  // ...and indexes for search the entries written before the index (content/search-index.ts)...
  const searchBackfill = startSearchBackfill(services);
  // ...and starts the workflow of any mail left queued (docs/accounts.md).
  const mails = startMailDrain(services);
  const recovery = {
    ...delivery,
    async stop() {
      await Promise.all([delivery.stop(), reconciler.stop(), retention.stop(), entryCounts.stop(), searchBackfill.stop(), mails.stop()]);
    },
  };
  return { worker, connection, recovery };
}
