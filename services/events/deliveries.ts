import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Services } from '../core/context.ts';
import { newId } from '../core/ids.ts';
import type { deliveryWorkflow } from '../../workflows/delivery.ts';
import { deliveryWorkflowId, deliveryWorkflowType, type DeliveryWorkflowInput } from '../../workflows/contracts/delivery.ts';
import { eventCollections, type DeliveryDoc, type EndpointDoc } from './model.ts';
import { webhookSettings } from './settings.ts';

/** The contract's payload ceiling (6.2.2, 8). */
export const MAX_BODY_BYTES = 256 * 1024;

export { deliveryWorkflowId };

export interface DeliveryTarget {
  dbName: string;
  siteId: string;
}

/**
 * Starts the delivery's workflow. Idempotent: the workflow id is the delivery id, so a second
 * start (drain, boot, a racing gateway) finds it running or finished and changes nothing; only a
 * run that failed or was terminated may be started again.
 */
export async function startDeliveryWorkflow(services: Services, where: DeliveryTarget, deliveryId: string): Promise<void> {
  const settings = webhookSettings(services);
  const input: DeliveryWorkflowInput = {
    dbName: where.dbName,
    siteId: where.siteId,
    deliveryId,
    retry: settings.retry,
    attemptTimeoutMs: settings.attemptTimeoutMs,
    heartbeatTimeoutMs: settings.heartbeatTimeoutMs,
  };
  try {
    await services.temporal.client.workflow.start<typeof deliveryWorkflow>(deliveryWorkflowType, {
      taskQueue: services.temporal.taskQueue,
      workflowId: deliveryWorkflowId(deliveryId),
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      args: [input],
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}

/**
 * Stores one delivery per endpoint before anything is sent, so an event survives a crash or a
 * Temporal outage between here and the start: the drain finds the row `pending` and starts it.
 * A body over the limit is recorded as failed without being sent.
 */
export async function storeDeliveries(
  services: Services,
  where: DeliveryTarget,
  endpoints: readonly Pick<EndpointDoc, '_id'>[],
  event: string,
  body: string,
  redeliveryOf: string | null = null,
): Promise<DeliveryDoc[]> {
  const now = services.clock.now();
  const tooLarge = Buffer.byteLength(body) > MAX_BODY_BYTES;
  const docs: DeliveryDoc[] = endpoints.map((endpoint) => ({
    _id: newId(),
    siteId: where.siteId,
    endpointId: endpoint._id,
    event,
    body: tooLarge ? '' : body,
    status: tooLarge ? 'failed' : 'pending',
    attempts: 0,
    responseCode: null,
    error: tooLarge ? `payload exceeds ${MAX_BODY_BYTES} bytes` : null,
    redeliveryOf,
    createdAt: now,
    updatedAt: now,
    finishedAt: tooLarge ? now : null,
  }));
  if (docs.length) await eventCollections(services.workspaceDb({ dbName: where.dbName })).deliveries.insertMany(docs);
  return docs;
}

/** Workflow starts in flight per process. A burst waits here instead of timing out at the server. */
const MAX_CONCURRENT_STARTS = 32;
const startLimiters = new WeakMap<Services, { active: number; waiting: Array<() => void> }>();

async function withStartSlot<T>(services: Services, run: () => Promise<T>): Promise<T> {
  let limiter = startLimiters.get(services);
  if (!limiter) startLimiters.set(services, (limiter = { active: 0, waiting: [] }));
  const slots = limiter;
  if (slots.active >= MAX_CONCURRENT_STARTS) await new Promise<void>((resolve) => slots.waiting.push(resolve));
  else slots.active++;
  try {
    return await run();
  } finally {
    // Hand the slot straight to the next waiter, or give it back.
    const next = slots.waiting.shift();
    if (next) next();
    else slots.active--;
  }
}

/** Starts each stored delivery on its own; a failure leaves that row for the drain and is logged. */
export async function startStoredDeliveries(services: Services, where: DeliveryTarget, docs: readonly DeliveryDoc[]): Promise<void> {
  await Promise.all(
    docs
      .filter((doc) => doc.status === 'pending')
      .map((doc) =>
        withStartSlot(services, () => startDeliveryWorkflow(services, where, doc._id)).catch((error: unknown) => {
          services.log.warn({ deliveryId: doc._id, err: error instanceof Error ? error.message : String(error) }, 'webhook delivery left for the drain');
        }),
      ),
  );
}
