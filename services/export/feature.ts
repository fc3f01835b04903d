import type { Feature } from '../core/feature.ts';
import { exportOperations } from './export-ops.ts';
import { EXPORT_BUCKET } from './model.ts';

/** Static export of published content to HTML + JSON in GridFS (docs/plugins.md, "Static export"). */
export const exportFeature: Feature = {
  name: 'static-export',
  operations: exportOperations,
  indexes: [
    // GridFS keeps the site in metadata: lookups by path (reads, rewrites), by entry and by run (the full-run sweep).
    { collection: `${EXPORT_BUCKET}.files`, keys: { 'metadata.siteId': 1, 'metadata.path': 1 } },
    { collection: `${EXPORT_BUCKET}.files`, keys: { 'metadata.siteId': 1, 'metadata.entryId': 1 } },
    { collection: `${EXPORT_BUCKET}.files`, keys: { 'metadata.siteId': 1, 'metadata.runId': 1 } },
  ],
};
