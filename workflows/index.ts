// The one barrel the worker bundles: every workflow the platform runs.
export { probeWorkflow } from './probe.ts';
// Superseded by the workspace actor; kept so a deletion started before it still finishes.
export { deleteWorkspaceWorkflow } from './workspace-lifecycle.ts';
export { workspaceWorkflow } from './workspace.ts';
// The per-delivery workflow of the old design stays registered so runs started before the upgrade finish.
export { deliveryWorkflow } from './delivery.ts';
export { endpointActorWorkflow } from './endpoint-actor.ts';
export { scheduleEntryWorkflow } from './schedule.ts';
export { termRemovalWorkflow } from './term-removal.ts';
export { pluginActivationWorkflow } from './plugin-activation.ts';
export { staticExportWorkflow } from './static-export.ts';
