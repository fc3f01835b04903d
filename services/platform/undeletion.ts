import type { Services } from '../core/context.ts';
import type { Figures } from '../core/feature.ts';
import { platformCollections } from '../tenancy/platform-db.ts';
import { claimFreeDomains } from './domains.ts';
import { publishWorkspaceChange } from './lifecycle.ts';

// Undelete, run by the workspace actor (so it never races the purge): a deleted workspace whose
// database is still there comes back as it was. docs/lifecycle.md.

/**
 * Step 1: each site claims its host names again, each one on its own: a host another site claimed
 * meanwhile is not restored (removed from the site, named in the row's `undeletion`); then the
 * workspace takes back the status it had before the deletion. Each part is recorded before the next,
 * so a retry after a crash reports the same hosts.
 */
export async function undeleteWorkspace(services: Services, workspaceId: string): Promise<void> {
  const { workspaces, sites } = platformCollections(services);
  const row = await workspaces.findOne({ _id: workspaceId });
  const previousStatus = row?.deletion?.previousStatus;
  if (!row || row.status !== 'deleted' || row.purgedAt || row.databaseDropped || !previousStatus) return;
  const notRestored = new Set(row.undeletion && row.undeletion.at >= row.deletion!.requestedAt ? row.undeletion.domainsNotRestored : []);
  for (const site of await sites.find({ workspaceId }).toArray()) {
    const taken = await claimFreeDomains(services, { workspaceId, siteId: site._id }, site.domains);
    if (taken.length === 0) continue;
    for (const host of taken) notRestored.add(host);
    const now = services.clock.now();
    // Recorded first: once the site no longer lists a host, a retry would not find it taken.
    await workspaces.updateOne({ _id: workspaceId }, { $set: { undeletion: { at: now, domainsNotRestored: [...notRestored] } } });
    await sites.updateOne({ _id: site._id }, { $set: { domains: site.domains.filter((host) => !taken.includes(host)), updatedAt: now } });
  }
  const now = services.clock.now();
  await workspaces.updateOne(
    { _id: workspaceId, status: 'deleted' },
    { $set: { status: previousStatus, undeletion: { at: now, domainsNotRestored: [...notRestored] }, updatedAt: now }, $unset: { deletion: '' } },
  );
  await publishWorkspaceChange(services, workspaceId);
}

/** Step 2: each feature starts again what the deletion stopped (`Feature.resumeWork`: entry schedules, the backup schedule). */
export async function resumeWorkspaceWork(services: Services, workspaceId: string): Promise<Figures> {
  const row = await platformCollections(services).workspaces.findOne({ _id: workspaceId });
  if (!row || (row.status !== 'active' && row.status !== 'suspended')) return {};
  const resumed: Record<string, number> = {};
  for (const feature of services.features) Object.assign(resumed, await feature.resumeWork?.(services, row));
  return resumed;
}
