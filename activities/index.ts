import type { Services } from '../services/core/context.ts';
import { createProbeActivities } from './probe.ts';

/** Every activity the worker registers, built from the process's services. */
export function createActivities(services: Services) {
  return {
    ...createProbeActivities(services),
  };
}
