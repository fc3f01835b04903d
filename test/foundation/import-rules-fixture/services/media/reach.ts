// Breaks features-never-import-the-platform: a feature reaching up into the platform's operations.
import { ops } from '../platform/ops.ts';

export const reach = ops;
