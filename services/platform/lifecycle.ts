import { topics } from '../core/topics.ts';
import type { Services } from '../core/context.ts';
import { NotFoundError } from '../core/errors.ts';
import { platformCollections } from '../tenancy/platform-db.ts';
import type { Workspace } from '../core/tenants.ts';

/**
 * Suspension and reactivation (run by the workspace actor): one conditional update, so a repeated
 * or late command does nothing. A suspended workspace answers 423 (its public API 404); a deleted
 * one stops resolving. Either holds on every gateway from the next request: the change is pushed
 * and acknowledged (publishWorkspaceChange, docs/access.md).
 */
export async function setWorkspaceStatus(services: Services, workspaceId: string, status: 'active' | 'suspended') {
  const { workspaces } = platformCollections(services);
  const updated = await workspaces.findOneAndUpdate(
    { _id: workspaceId, status: status === 'active' ? 'suspended' : 'active' },
    { $set: { status, updatedAt: services.clock.now() } },
    { returnDocument: 'after' },
  );
  await publishWorkspaceChange(services, workspaceId);
  return updated;
}

/**
 * Every gateway drops what it holds of the workspace (its hosts' answers carry the workspace row:
 * status, quotas) before this returns: the change feed waits for each live gateway's acknowledgement.
 * The workspace's host names are named too (`hostNames`, or read): an answer cached before a domain
 * was claimed carries only its host's topic.
 */
export async function publishWorkspaceChange(
  services: Pick<Services, 'changeFeed' | 'platformDb'>,
  workspaceId: string,
  hostNames?: readonly string[],
): Promise<void> {
  const names = hostNames ?? (await workspaceHostNames(services, workspaceId));
  await services.changeFeed.publish([topics.workspace(workspaceId), ...names.map(topics.host)]);
}

/** The host names a workspace's domain rows hold. */
export async function workspaceHostNames(services: Pick<Services, 'platformDb'>, workspaceId: string): Promise<string[]> {
  const rows = await platformCollections(services)
    .domains.find({ workspaceId }, { projection: { _id: 1 } })
    .toArray();
  return rows.map((row) => row._id);
}

export async function getWorkspace(services: Services, workspaceId: string): Promise<Workspace> {
  const workspace = await platformCollections(services).workspaces.findOne({ _id: workspaceId });
  if (!workspace) throw new NotFoundError();
  return workspace;
}
