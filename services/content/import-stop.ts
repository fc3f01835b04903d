import type { Services } from '../core/context.ts';
import type { Workspace } from '../core/tenants.ts';
import { stopWorkspaceWorkflow } from '../core/workflow-stop.ts';
import { contentImportWorkflowId } from '../../workflows/contracts/content-import.ts';
import { importsCollection } from './import-model.ts';

/** A deleted workspace's imports still running: their jobs stopped (`Feature.stopWork`). Answers how many. */
export async function stopImports(services: Services, workspace: Workspace): Promise<number> {
  let n = 0;
  const open = importsCollection(services.workspaceDb(workspace)).find({ state: { $in: ['queued', 'running'] } }, { projection: { _id: 1, siteId: 1 } });
  for await (const job of open) {
    await stopWorkspaceWorkflow(services, workspace, contentImportWorkflowId(workspace._id, job.siteId, job._id));
    n++;
  }
  return n;
}
