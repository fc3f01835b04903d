import { topics } from '../core/topics.ts';
import type { Services } from '../core/context.ts';
import type { ProvisionInput } from '../core/feature.ts';
import { createContext } from '../core/context.ts';
import { systemPrincipal } from '../core/principal.ts';
import { hostNames, type Site, type Workspace } from '../core/tenants.ts';
import { platformCollections } from '../tenancy/platform-db.ts';

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
