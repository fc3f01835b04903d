import type { Services } from '../core/context.ts';
import { contentCollections } from '../content/model.ts';
import { scheduleWorkflowId } from '../content/schedule.ts';
import { eventCollections } from '../events/model.ts';
import { deliveryWorkflowId } from '../events/deliveries.ts';
import { endpointActorId } from '../../workflows/contracts/endpoint-actor.ts';
import { staticExportWorkflowId } from '../../workflows/contracts/static-export.ts';
import { platformCollections } from '../tenancy/platform-db.ts';
import { publishWorkspaceChange, workspaceHostNames } from './lifecycle.ts';

/**
 * Step 1: the workspace stops answering (`deleting` does not resolve) and the request is recorded.
 * Asking again is harmless; asking to drop the database after a deletion that kept it drops it.
 */
export async function beginWorkspaceDeletion(services: Services, workspaceId: string, dropDatabase: boolean): Promise<boolean> {
  const { workspaces } = platformCollections(services);
  const row = await workspaces.findOne({ _id: workspaceId });
  if (!row) return false;
  const drop = dropDatabase || row.deletion?.dropDatabase === true;
  if (row.status === 'deleted' && (!drop || row.databaseDropped)) return false;
  await workspaces.updateOne(
    { _id: workspaceId },
    {
      $set: { status: 'deleting', deletion: { dropDatabase: drop, requestedAt: row.deletion?.requestedAt ?? services.clock.now() }, updatedAt: services.clock.now() },
      $unset: { provisioning: '' },
    },
  );
  await publishWorkspaceChange(services, workspaceId);
  return true;
}

/** Stops a workflow if it runs; one that already ended is fine. */
async function stopWorkflow(services: Services, workflowId: string, reason: string): Promise<void> {
  try {
    await services.temporal.client.workflow.getHandle(workflowId).terminate(reason);
  } catch (error) {
    const text = `${(error as Error).name} ${(error as Error).message}`;
    if (/not ?found|already completed|completed/i.test(text)) return;
    throw error;
  }
}

/**
 * Step 2: nothing of the workspace keeps running: each site's export actor, every entry schedule,
 * each webhook endpoint's actor and every pending delivery (marked failed, so no drain restarts it).
 */
export async function cancelWorkspaceWork(services: Services, workspaceId: string): Promise<{ exports: number; schedules: number; deliveries: number }> {
  const row = await platformCollections(services).workspaces.findOne({ _id: workspaceId });
  if (!row || row.status !== 'deleting') return { exports: 0, schedules: 0, deliveries: 0 };
  const reason = `workspace ${workspaceId} deleted`;
  const db = services.workspaceDb(row);
  const sites = await platformCollections(services).sites.find({ workspaceId }, { projection: { _id: 1 } }).toArray();
  for (const site of sites) await stopWorkflow(services, staticExportWorkflowId({ workspaceId, siteId: site._id }), reason);

  let schedules = 0;
  for await (const entry of contentCollections(db).entries.find({ schedule: { $ne: null } }, { projection: { _id: 1 } })) {
    await stopWorkflow(services, scheduleWorkflowId(workspaceId, entry._id), reason);
    schedules += 1;
  }
  let deliveries = 0;
  const { deliveries: deliveryRows, endpoints } = eventCollections(db);
  // Each endpoint's delivery actor (and, below, the per-delivery workflows of the older design).
  for await (const endpoint of endpoints.find({}, { projection: { _id: 1 } })) {
    await stopWorkflow(services, endpointActorId(workspaceId, endpoint._id), reason);
  }
  for await (const delivery of deliveryRows.find({ status: 'pending' }, { projection: { _id: 1 } })) {
    await stopWorkflow(services, deliveryWorkflowId(delivery._id), reason);
    await deliveryRows.updateOne(
      { _id: delivery._id, status: 'pending' },
      { $set: { status: 'failed', error: 'workspace deleted', finishedAt: services.clock.now(), updatedAt: services.clock.now() } },
    );
    deliveries += 1;
  }
  return { exports: sites.length, schedules, deliveries };
}

/** Step 3: other sites may claim the workspace's host names again. */
export async function releaseWorkspaceDomainClaims(services: Services, workspaceId: string): Promise<number> {
  const names = await workspaceHostNames(services, workspaceId);
  const result = await platformCollections(services).domains.deleteMany({ workspaceId });
  await publishWorkspaceChange(services, workspaceId, names);
  return result.deletedCount;
}

/** Step 4: the database goes when asked, then the workspace is `deleted` (its row stays, as a record). */
export async function finishWorkspaceDeletion(services: Services, workspaceId: string): Promise<void> {
  const { workspaces } = platformCollections(services);
  const row = await workspaces.findOne({ _id: workspaceId });
  if (!row || row.status !== 'deleting') return;
  const drop = row.deletion?.dropDatabase === true;
  if (drop) await services.workspaceDb(row).dropDatabase();
  await workspaces.updateOne(
    { _id: workspaceId, status: 'deleting' },
    { $set: { status: 'deleted', updatedAt: services.clock.now(), ...(drop ? { databaseDropped: true } : {}) } },
  );
  await publishWorkspaceChange(services, workspaceId);
}

