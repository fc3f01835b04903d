import type { Feature } from '../core/feature.ts';
import { stopWorkspaceWorkflow } from '../core/workflow-stop.ts';
import { platformCollections } from '../tenancy/platform-db.ts';
import { staticExportWorkflowId } from '../../workflows/contracts/static-export.ts';
import { exportOperations } from './export-ops.ts';

/** Static export of published content to HTML + JSON in the workspace database (docs/plugins.md, "Static export"). */
export const exportFeature: Feature = {
  name: 'static-export',
  operations: exportOperations,
  // No index of its own: the output is read and written by `_id` (files.ts); the runs, listed latest
  // first, are at most RUN_HISTORY per site (runner.ts `recordRun`), sorted as read.
  /** Each site's export actor. */
  async stopWork(services, workspace) {
    const sites = await platformCollections(services)
      .sites.find({ workspaceId: workspace._id }, { projection: { _id: 1 } })
      .toArray();
    for (const site of sites) await stopWorkspaceWorkflow(services, workspace, staticExportWorkflowId({ workspaceId: workspace._id, siteId: site._id }));
    return { exports: sites.length };
  },
};
