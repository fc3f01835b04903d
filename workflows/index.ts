// The one barrel the worker bundles: every workflow the platform runs.
export { probeWorkflow } from './probe.ts';
export { workspaceWorkflow } from './workspace.ts';
export { endpointActorWorkflow } from './endpoint-actor.ts';
export { scheduleEntryWorkflow } from './schedule.ts';
export { termRemovalWorkflow } from './term-removal.ts';
export { pluginActivationWorkflow } from './plugin-activation.ts';
export { staticExportWorkflow } from './static-export.ts';
export { backupWorkflow, restoreWorkflow, scheduledBackupWorkflow } from './backup.ts';
export { cloneWorkflow } from './clone.ts';
export { mailWorkflow } from './mail.ts';
export { contentImportWorkflow } from './content-import.ts';
export { moveWorkflow } from './move.ts';
