import type { Services } from './core/context.ts';

/**
 * Workflow types this release no longer registers. A run of one still open when the worker is
 * upgraded cannot progress (no worker knows its code): the drain condition, checked before an
 * upgrade, is that none is open (docs/lifecycle.md, docs/webhooks.md). Each entry says what to do about one that is.
 */
export const RETIRED_WORKFLOWS: readonly { type: string; remedy: string }[] = [
  {
    // `workspace-delete:<workspaceId>`, superseded by the workspace actor's `delete` command.
    type: 'deleteWorkspaceWorkflow',
    remedy: 'terminate it, then DELETE /tenants/{id} again (same dropDatabase): the workspace actor finishes the deletion',
  },
  {
    // `delivery:<deliveryId>`, superseded by the endpoint actors (docs/webhooks.md).
    type: 'deliveryWorkflow',
    remedy: 'finish it with the previous release, or terminate it: the webhook drain then hands its delivery to the endpoint actor',
  },
];

export interface OpenRetiredRun {
  type: string;
  workflowId: string;
  remedy: string;
}

/** Open runs of the retired workflow types in this namespace (Temporal visibility), at most `limit`. */
export async function openRetiredRuns(services: Pick<Services, 'temporal'>, retired = RETIRED_WORKFLOWS, limit = 100): Promise<OpenRetiredRun[]> {
  const found: OpenRetiredRun[] = [];
  for (const { type, remedy } of retired) {
    const query = `WorkflowType = '${type}' AND ExecutionStatus = 'Running'`;
    for await (const info of services.temporal.client.workflow.list({ query })) {
      found.push({ type, workflowId: info.workflowId, remedy });
      if (found.length >= limit) return found;
    }
  }
  return found;
}

/** At worker start: an error line per open run of a retired workflow (the start goes on: other work must not wait). */
export async function reportRetiredRuns(services: Services): Promise<void> {
  try {
    for (const run of await openRetiredRuns(services)) {
      services.log.error(run, 'a retired workflow is still running and cannot finish on this release; see docs/lifecycle.md');
    }
  } catch (error) {
    services.log.warn({ err: error }, 'could not check for runs of retired workflows');
  }
}
