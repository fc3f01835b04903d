import type { Feature } from './core/feature.ts';
import type { Operation } from './core/operation.ts';
import { platformFeature } from './platform/feature.ts';

/** Every feature folder, in the order they provision a new workspace. */
export const features: readonly Feature[] = [platformFeature];

export const allOperations = (): Operation[] => features.flatMap((feature) => [...feature.operations]);
