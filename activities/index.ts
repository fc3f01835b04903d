import type { Services } from '../services/core/context.ts';
import { createProbeActivities } from './probe.ts';
import { createWorkspaceActivities } from './workspace.ts';
import { createEndpointActorActivities } from './endpoint-actor.ts';
import { createScheduleActivities } from './schedule.ts';
import { createTermRemovalActivities } from './term-removal.ts';
import { createPluginActivities } from './plugin-activation.ts';
import { createExportActivities } from './export.ts';
import { createBackupActivities } from './backup.ts';
import { createMailActivities } from './mail.ts';
import { createContentImportActivities } from './content-import.ts';
import { createMoveActivities } from './move.ts';

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/**
 * Merges the activity groups into the one object the worker registers. Temporal knows activities
 * by name only, so a name defined twice would silently replace the first: it throws instead.
 */
export function mergeActivityGroups<G extends Record<string, Record<string, unknown>>>(groups: G): UnionToIntersection<G[keyof G]> {
  const merged: Record<string, unknown> = {};
  const owners = new Map<string, string>();
  for (const [group, activities] of Object.entries(groups)) {
    for (const [name, activity] of Object.entries(activities)) {
      const owner = owners.get(name);
      if (owner) throw new Error(`activity ${name} is defined by both ${owner} and ${group}`);
      owners.set(name, group);
      merged[name] = activity;
    }
  }
  return merged as UnionToIntersection<G[keyof G]>;
}

/** Every activity the worker registers, built from the process's services. */
export function createActivities(services: Services) {
  return mergeActivityGroups({
    probe: createProbeActivities(services),
    workspace: createWorkspaceActivities(services),
    endpointActor: createEndpointActorActivities(services),
    schedule: createScheduleActivities(services),
    termRemoval: createTermRemovalActivities(services),
    pluginActivation: createPluginActivities(services),
    export: createExportActivities(services),
    backup: createBackupActivities(services),
    mail: createMailActivities(services),
    contentImport: createContentImportActivities(services),
    move: createMoveActivities(services),
  });
}
