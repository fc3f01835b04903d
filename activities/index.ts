import type { Services } from '../services/core/context.ts';
import { createProbeActivities } from './probe.ts';
import { createWorkspaceLifecycleActivities } from './workspace-lifecycle.ts';
import { createWorkspaceActivities } from './workspace.ts';
import { createDeliveryActivities } from './delivery.ts';
import { createScheduleActivities } from './schedule.ts';
import { createPluginActivities } from './plugin-activation.ts';
import { createExportActivities } from './export.ts';

/** Every activity the worker registers, built from the process's services. */
export function createActivities(services: Services) {
  return {
    ...createProbeActivities(services),
    ...createWorkspaceLifecycleActivities(services),
    ...createWorkspaceActivities(services),
    ...createDeliveryActivities(services),
    ...createScheduleActivities(services),
    ...createPluginActivities(services),
    ...createExportActivities(services),
  };
}
