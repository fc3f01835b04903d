import { condition, continueAsNew, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { EndpointActorActivities } from '../activities/endpoint-actor.ts';
import { wakeSignal, type EndpointActorInput } from './contracts/endpoint-actor.ts';

/**
 * One long-lived actor per webhook endpoint. The deliveries themselves live in MongoDB (the
 * outbox); the actor runs delivery passes (one activity claims due rows in batches, sends them
 * with the endpoint's concurrency and rate, writes every attempt and schedules failed ones'
 * retries on the rows) and sleeps on a durable timer until the earliest retry is due or a wake
 * signal arrives. A pass handles many deliveries, so the Temporal cost per delivery is a small
 * fraction of one commit. It continues-as-new every `passesPerRun` passes (or when Temporal
 * suggests it): the state is in the rows, so the new run carries nothing but the input.
 */
export async function endpointActorWorkflow(input: EndpointActorInput): Promise<void> {
  const { deliverPending } = proxyActivities<EndpointActorActivities>({
    // A pass stops claiming at its budget; the last batch may still wait for one attempt timeout.
    startToCloseTimeout: input.passBudgetMs + input.attemptTimeoutMs + 30_000,
    heartbeatTimeout: input.heartbeatTimeoutMs,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
  });
  let woken = false;
  setHandler(wakeSignal, () => {
    woken = true;
  });
  const ref = { dbName: input.dbName, siteId: input.siteId, endpointId: input.endpointId };
  for (let pass = 0; pass < input.passesPerRun && !workflowInfo().continueAsNewSuggested; pass++) {
    woken = false;
    const result = await deliverPending(ref);
    if (result.more) continue;
    // Paused or idle: only a wake (new rows, resume) brings it back; retries wait on a timer.
    const waitMs = !result.paused && result.nextDueAt !== null ? Math.max(0, result.nextDueAt - Date.now()) : input.idleMs;
    const wokenUp = await condition(() => woken, waitMs);
    if (!wokenUp && (result.paused || result.nextDueAt === null)) return;
  }
  await continueAsNew<typeof endpointActorWorkflow>(input);
}
