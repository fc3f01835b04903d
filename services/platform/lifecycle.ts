import type { Services } from '../core/context.ts';
import { NotFoundError } from '../core/errors.ts';
import { platformCollections } from './workspaces.ts';
import type { Workspace } from '../core/tenants.ts';

/**
 * Suspension and reactivation (run by the workspace actor): one conditional update, so a repeated
 * or late command does nothing. Workspace status changes. A suspended or deleted workspace stops resolving: its hosts answer 404
 * on this gateway at once and on every other within the resolver's cache time (3 s).
 */
export async function setWorkspaceStatus(services: Services, workspaceId: string, status: Workspace['status']) {
  const { workspaces } = platformCollections(services);
  const allowedFrom: Record<Workspace['status'], Workspace['status'][]> = {
    active: ['suspended'],
    suspended: ['active'],
    // The old `workspace-delete:<id>` workflow, kept so deletions started before the actor finish.
    deleted: ['active', 'suspended', 'deleted', 'deleting'],
    provisioning: [],
    deleting: [],
  };
  const updated = await workspaces.findOneAndUpdate(
    { _id: workspaceId, status: { $in: allowedFrom[status] } },
    { $set: { status, updatedAt: services.clock.now() } },
    { returnDocument: 'after' },
  );
  services.sites.forget();
  return updated;
}

export async function getWorkspace(services: Services, workspaceId: string): Promise<Workspace> {
  const workspace = await platformCollections(services).workspaces.findOne({ _id: workspaceId });
  if (!workspace) throw new NotFoundError();
  return workspace;
}

/** Frees the workspace's host names so other sites may claim them. Idempotent. */
export async function releaseDomains(services: Services, workspaceId: string): Promise<number> {
  const result = await platformCollections(services).domains.deleteMany({ workspaceId });
  services.sites.forget();
  return result.deletedCount;
}

/** Drops the workspace's own database. Idempotent: dropping a dropped database is a no-op. */
export async function dropWorkspaceDatabase(services: Services, workspaceId: string): Promise<void> {
  const workspace = await getWorkspace(services, workspaceId);
  if (workspace.status !== 'deleted') throw new Error(`refusing to drop the database of a ${workspace.status} workspace`);
  await services.workspaceDb(workspace).dropDatabase();
}
