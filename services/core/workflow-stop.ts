import type { Services } from './context.ts';
import type { Workspace } from './tenants.ts';

/**
 * Stops one of a deleted workspace's workflows if it runs (`Feature.stopWork`); one that already
 * ended, or never started, is fine.
 */
export async function stopWorkspaceWorkflow(services: Pick<Services, 'temporal'>, workspace: Pick<Workspace, '_id'>, workflowId: string): Promise<void> {
  try {
    await services.temporal.client.workflow.getHandle(workflowId).terminate(`workspace ${workspace._id} deleted`);
  } catch (error) {
    const text = `${(error as Error).name} ${(error as Error).message}`;
    if (/not ?found|already completed|completed/i.test(text)) return;
    throw error;
  }
}
