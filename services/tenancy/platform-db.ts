import type { Services } from '../core/context.ts';
import { PLATFORM_COLLECTIONS, type DomainRow, type Site, type Workspace } from '../core/tenants.ts';

/** The site `localhost` means on a fresh install: the bootstrap's default workspace's first site. */
export const DEFAULT_SITE_ID = 'default';

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
export async function findSiteScope(
  services: Pick<Services, 'platformDb'>,
  siteId: string,
  workspaceId?: string,
): Promise<{ workspace: Workspace; site: Site } | null> {
  const { workspaces, sites } = platformCollections(services);
  const site = await sites.findOne(workspaceId === undefined ? { _id: siteId } : { _id: siteId, workspaceId });
  const workspace = site ? await workspaces.findOne({ _id: site.workspaceId }) : null;
  return site && workspace ? { workspace, site } : null;
}
