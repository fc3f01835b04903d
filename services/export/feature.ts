import type { Feature } from '../core/feature.ts';
import { exportOperations } from './export-ops.ts';

/** Static export of published content to HTML + JSON in the workspace database (docs/plugins.md, "Static export"). */
export const exportFeature: Feature = {
  name: 'static-export',
  operations: exportOperations,
  // No secondary index: every read and write of the output goes by `_id` (files.ts).
  indexes: [],
};
