import type { Services } from '../core/context.ts';

/**
 * What is left of the design before the endpoint actors, one workflow per delivery
 * (docs/webhooks.md, "Retired: one workflow per delivery"). Its workflow is no longer registered;
 * its rows (no `via`) are handed to the actors by the drain (recovery.ts) once their run is not
 * open, and the worker checks at start that no run is left.
 */
export const legacyDeliveryWorkflowType = 'deliveryWorkflow';

/** The id the old design gave a delivery's run. */
export const deliveryWorkflowId = (deliveryId: string) => `delivery:${deliveryId}`;

/** How many of the open runs the start check names in its log line. */
const NAMED = 10;

/**
 * The upgrade's drain condition: no run of the retired workflow open on this worker's task queue
 * (asked through Temporal's visibility: reads, no commit). Returns how many there are and the ids
 * of the first ones.
 */
export async function openLegacyDeliveryRuns(services: Services): Promise<{ count: number; ids: string[] }> {
  const { client, taskQueue } = services.temporal;
  const query = `WorkflowType='${legacyDeliveryWorkflowType}' AND ExecutionStatus='Running' AND TaskQueue='${taskQueue}'`;
  const { count } = await client.workflow.count(query);
  const ids: string[] = [];
  if (count === 0) return { count, ids };
  for await (const run of client.workflow.list({ query, pageSize: NAMED })) {
    ids.push(run.workflowId);
    if (ids.length >= NAMED) break;
  }
  return { count, ids };
}

/**
 * Run by the worker at start: a run left open cannot move any more (no worker of this version
 * knows its type) and its delivery waits, so it is logged as an error with what to do. Returns the count.
 */
export async function checkLegacyDeliveryDrain(services: Services): Promise<number> {
  const { count, ids } = await openLegacyDeliveryRuns(services);
  if (count > 0) {
    services.log.error(
      { count, taskQueue: services.temporal.taskQueue, workflowIds: ids },
      `${count} run(s) of the retired ${legacyDeliveryWorkflowType} are still open and no worker of this version runs them: ` +
        'finish them with the previous version, or terminate them (the webhook drain then hands their deliveries to the endpoint actors); docs/webhooks.md',
    );
  }
  return count;
}
