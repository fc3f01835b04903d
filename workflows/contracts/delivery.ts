// The contract of the webhook delivery workflow: shared by the workflow, its activities and the
// events feature that starts it. Pure: types and strings only.

/** The workflow type; equals the function's name exported from workflows/index.ts. */
export const deliveryWorkflowType = 'deliveryWorkflow';

/** The workflow id is the delivery id: a second start finds it and changes nothing. */
export const deliveryWorkflowId = (deliveryId: string) => `delivery:${deliveryId}`;

/** Error type of an attempt no retry can fix (target refused, endpoint gone); never retried. */
export const DELIVERY_REJECTED = 'DeliveryRejected';

/** Everything a delivery run needs; the settings travel with it so tests can use short backoffs. */
export interface DeliveryWorkflowInput {
  dbName: string;
  siteId: string;
  deliveryId: string;
  retry: { initialIntervalMs: number; backoffCoefficient: number; maximumIntervalMs: number; maximumAttempts: number };
  attemptTimeoutMs: number;
  heartbeatTimeoutMs: number;
}

export interface DeliveryOutcome {
  deliveryId: string;
  status: 'delivered' | 'failed';
}
