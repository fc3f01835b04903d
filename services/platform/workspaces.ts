import { topics } from '../core/topics.ts';
import type { Services } from '../core/context.ts';
import type { ProvisionInput } from '../core/feature.ts';
import { createContext } from '../core/context.ts';
import { systemPrincipal } from '../core/principal.ts';
import { hostNames, PLATFORM_COLLECTIONS, type DomainRow, type Site, type Workspace } from '../core/tenants.ts';

export function platformCollections(services: Pick<Services, 'platformDb'>) {
  const db = services.platformDb;
  return {
    workspaces: db.collection<Workspace>(PLATFORM_COLLECTIONS.workspaces),
    sites: db.collection<Site>(PLATFORM_COLLECTIONS.sites),
    domains: db.collection<DomainRow>(PLATFORM_COLLECTIONS.domains),
  };
}

/**
 * A site with its workspace, by site id: the one place the site → workspace lookup is written.
 * `workspaceId`, when the caller knows it, must match (a workflow input never reaches another
 * workspace's site). Null when either is gone.
 */
export async function findSiteScope(services: Pick<Services, 'platformDb'>, siteId: string, workspaceId?: string): Promise<{ workspace: Workspace; site: Site } | null> {
  const { workspaces, sites } = platformCollections(services);
  const site = await sites.findOne(workspaceId === undefined ? { _id: siteId } : { _id: siteId, workspaceId });
  const workspace = site ? await workspaces.findOne({ _id: site.workspaceId }) : null;
  return site && workspace ? { workspace, site } : null;
}

export interface AddSiteInput extends ProvisionInput {
  name: string;
  domains?: string[];
  siteId: string;
}

/**
 * Adds a site to a workspace whose domains the caller has claimed (`platform/domains.ts`), then lets
 * each feature provision it (the access feature creates the site's administrator). Idempotent by
 * site id, so a retry finishes the job.
 */
export async function addSite(services: Services, workspace: Workspace, input: AddSiteInput) {
  const now = services.clock.now();
  const siteId = input.siteId;
  const hosts = hostNames(input.domains ?? []);

  const site: Site = { _id: siteId, workspaceId: workspace._id, name: input.name, domains: hosts, quotas: {}, createdAt: now, updatedAt: now };
  await platformCollections(services).sites.updateOne({ _id: siteId }, { $setOnInsert: site }, { upsert: true });

  const ctx = createContext(services, { workspace, site }, systemPrincipal('site provisioning'), { id: `provision:${siteId}`, ip: '127.0.0.1' });
  for (const feature of services.features) await feature.provisionSite?.(ctx, input);
  await services.changeFeed.publish([topics.site(siteId), ...hosts.map(topics.host)]);
  return site;
}
