import type { Services } from '../core/context.ts';
import { ConflictError } from '../core/errors.ts';
import { isDuplicateKey } from '../core/mongo-errors.ts';
import { platformCollections } from '../tenancy/platform-db.ts';
import { publishWorkspaceChange, workspaceHostNames } from './lifecycle.ts';

// A host name belongs to one site: its row in `domains` has the host as `_id`, so the unique key
// decides every race. Claimed here, released here; nothing else writes the collection.

type DomainOwner = { workspaceId: string; siteId: string };

/**
 * Claims each of the hosts that is free, on its own, in one unordered insert (an undelete: the rest
 * of a site comes back even when another site claimed one host meanwhile). Answers the hosts another
 * site holds, not claimed; a host this site holds already counts as claimed.
 */
export async function claimFreeDomains(services: Services, owner: DomainOwner, hosts: readonly string[]): Promise<string[]> {
  if (hosts.length === 0) return [];
  const { domains } = platformCollections(services);
  try {
    await domains.insertMany(
      hosts.map((host) => ({ _id: host, siteId: owner.siteId, workspaceId: owner.workspaceId })),
      { ordered: false },
    );
    return [];
  } catch (error) {
    if (!isDuplicateKey(error)) throw error;
  }
  const held = await domains.find({ _id: { $in: [...hosts] }, siteId: { $ne: owner.siteId } }, { projection: { _id: 1 } }).toArray();
  return held.map((row) => row._id);
}

/**
 * Claims the hosts for a site, all or none, in one insert. A host another site holds undoes this
 * site's claims among `hosts` and is a 409 naming it; a host this site holds already counts as
 * claimed (a step resumed after a crash).
 */
export async function claimDomains(services: Services, owner: DomainOwner, hosts: readonly string[]): Promise<void> {
  const held = await claimFreeDomains(services, owner, hosts);
  if (held.length === 0) return;
  await platformCollections(services).domains.deleteMany({ _id: { $in: [...hosts] }, siteId: owner.siteId });
  const taken = new Set(held);
  throw new ConflictError(`Domain already in use: ${hosts.find((host) => taken.has(host))}`);
}

/** Whether the site holds every one of its hosts (a read; they were claimed when the workspace was asked for). */
export async function holdsDomains(services: Services, siteId: string, hosts: readonly string[]): Promise<boolean> {
  if (hosts.length === 0) return true;
  return (await platformCollections(services).domains.countDocuments({ _id: { $in: [...hosts] }, siteId })) === hosts.length;
}

/** Frees every host name of the workspace, so other sites may claim them; every gateway drops its answers for them. Idempotent. */
export async function releaseWorkspaceDomains(services: Services, workspaceId: string): Promise<number> {
  const names = await workspaceHostNames(services, workspaceId);
  const result = await platformCollections(services).domains.deleteMany({ workspaceId });
  await publishWorkspaceChange(services, workspaceId, names);
  return result.deletedCount;
}
