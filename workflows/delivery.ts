import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { DeliveryActivities } from '../activities/delivery.ts';
import { DELIVERY_REJECTED, type DeliveryOutcome, type DeliveryWorkflowInput } from './contracts/delivery.ts';

export type { DeliveryOutcome, DeliveryWorkflowInput };

/**
 * One webhook delivery. The HTTP attempt is an activity and Temporal's retry policy is the
 * backoff: a non-2xx answer or a timeout fails the attempt, Temporal retries it (exponential
 * backoff, `maximumAttempts` in all), and a worker killed mid-attempt is noticed by the missing
 * heartbeat and the attempt runs again on another worker. Each attempt writes its own history row.
 */
export async function deliveryWorkflow(input: DeliveryWorkflowInput): Promise<DeliveryOutcome> {
  const { attemptDelivery } = proxyActivities<DeliveryActivities>({
    // The attempt aborts its own request at attemptTimeoutMs; this bound only catches a stuck activity.
    startToCloseTimeout: input.attemptTimeoutMs + 15_000,
    heartbeatTimeout: input.heartbeatTimeoutMs,
    retry: {
      initialInterval: input.retry.initialIntervalMs,
      backoffCoefficient: input.retry.backoffCoefficient,
      maximumInterval: input.retry.maximumIntervalMs,
      maximumAttempts: input.retry.maximumAttempts,
      nonRetryableErrorTypes: [DELIVERY_REJECTED],
    },
  });
  const { markDeliveryFailed } = proxyActivities<DeliveryActivities>({
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });
  const ref = { dbName: input.dbName, siteId: input.siteId, deliveryId: input.deliveryId };
  try {
    await attemptDelivery(ref);
    return { deliveryId: input.deliveryId, status: 'delivered' };
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    const cause = error.cause;
    const message = cause instanceof ApplicationFailure || cause instanceof Error ? cause.message : 'delivery failed';
    await markDeliveryFailed({ ...ref, error: message });
    return { deliveryId: input.deliveryId, status: 'failed' };
  }
}
