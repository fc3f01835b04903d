/**
 * What is left of the design before the endpoint actors, one workflow per delivery
 * (docs/webhooks.md, "Retired: one workflow per delivery"). Its workflow is no longer registered;
 * its rows (no `via`) are handed to the actors by the drain (recovery.ts) once their run is not
 * open; the worker checks at start that no run is left (services/retired-workflows.ts).
 */
export const legacyDeliveryWorkflowType = 'deliveryWorkflow';

/** The id the old design gave a delivery's run. */
export const deliveryWorkflowId = (deliveryId: string) => `delivery:${deliveryId}`;
