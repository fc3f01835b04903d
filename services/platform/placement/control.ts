import type { Services } from '../../core/context.ts';
import { DEFAULT_CLUSTER } from '../../core/clusters.ts';
import { BadRequestError, ConflictError, NotFoundError, ServiceUnavailableError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { moveWorkflowId, moveWorkflowType, type MoveRef } from '../../../workflows/contracts/move.ts';
import { getWorkspace } from '../lifecycle.ts';
import { moveCollections, type MoveRow } from './model.ts';

/**
 * Records a move as `running` and starts its workflow (`move:<workspaceId>:<moveId>`). Refused
 * (409) when the workspace is not active or suspended, is already on that cluster, a backup holds
 * it or a move of it runs; an unknown cluster is a 400.
 */
export async function startMove(services: Services, workspaceId: string, cluster: string): Promise<MoveRow> {
  if (!services.placement.pool.has(cluster)) throw new BadRequestError(`Unknown cluster: ${cluster}`);
  const workspace = await getWorkspace(services, workspaceId);
  if (workspace.status !== 'active' && workspace.status !== 'suspended') throw new ConflictError(`Workspace is ${workspace.status}`);
  const from = workspace.cluster ?? DEFAULT_CLUSTER;
  if (from === cluster) throw new ConflictError(`Workspace is already on ${cluster}`);
  if (workspace.writeHold) throw new ConflictError('A backup or restore of this workspace is running');
  const { moves } = moveCollections(services);
  if (workspace.move || (await moves.findOne({ workspaceId, state: 'running' }, { projection: { _id: 1 } }))) {
    throw new ConflictError('A move of this workspace is running');
  }
  const now = services.clock.now();
  const row: MoveRow = {
    _id: newId(),
    workspaceId,
    from,
    to: cluster,
    state: 'running',
    step: 'copying',
    progress: { collections: 0, collectionsDone: 0, documents: 0, catchUpPasses: 0, changesApplied: 0 },
    copied: [],
    switchStartedAt: null,
    switchEndedAt: null,
    error: null,
    createdAt: now,
    updatedAt: now,
    finishedAt: null,
  };
  await moves.insertOne(row);
  const ref: MoveRef = { workspaceId, moveId: row._id };
  try {
    await services.temporal.client.workflow.start(moveWorkflowType, {
      taskQueue: services.temporal.taskQueue,
      workflowId: moveWorkflowId(workspaceId, row._id),
      args: [ref],
    });
  } catch (error) {
    services.log.error({ err: error, workspaceId }, 'move workflow not started');
    await moves.updateOne({ _id: row._id }, { $set: { state: 'failed', error: 'The workflow engine is unavailable', finishedAt: now } });
    throw new ServiceUnavailableError('The workflow engine is unavailable');
  }
  return row;
}

export async function findMove(services: Services, workspaceId: string, moveId: string): Promise<MoveRow> {
  const row = await moveCollections(services).moves.findOne({ _id: moveId, workspaceId });
  if (!row) throw new NotFoundError('Move not found');
  return row;
}
