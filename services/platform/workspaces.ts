import { topics } from '../core/topics.ts';
import type { Services } from '../core/context.ts';
import type { ProvisionInput } from '../core/feature.ts';
import { createContext } from '../core/context.ts';
import { newId } from '../core/ids.ts';
import { ConflictError } from '../core/errors.ts';
import { systemPrincipal } from '../core/principal.ts';
import { ensureIndexes } from '../tenancy/indexes.ts';
import { workspaceIndexSpecs, workspaceIndexVersion } from '../tenancy/index-version.ts';
import type { Site, Workspace } from '../core/tenants.ts';
import { platformCollections } from '../tenancy/platform-db.ts';

export interface CreateWorkspaceInput extends ProvisionInput {
  name: string;
  siteName?: string;
  domains?: string[];
  /** Fixed ids are for the bootstrap default workspace only. */
  workspaceId?: string;
  siteId?: string;
}

/** Claims each host for the site; a host another site holds is a 409 (the unique `_id` decides races). */
async function claimDomains(services: Services, workspaceId: string, siteId: string, hosts: readonly string[]) {
  const { domains } = platformCollections(services);
  for (const host of hosts) {
    try {
      await domains.insertOne({ _id: host, siteId, workspaceId });
    } catch (error) {
      if ((error as { code?: number }).code !== 11000) throw error;
      const holder = await domains.findOne({ _id: host });
      if (holder?.siteId !== siteId) throw new ConflictError(`Domain already in use: ${host}`);
    }
  }
}

export interface AddSiteInput extends ProvisionInput {
  name: string;
  domains?: string[];
  siteId?: string;
}

/**
 * Adds a site to a workspace: claims its domains, then lets each feature provision it (the access
 * feature creates the site's administrator). Idempotent by site id, so a retry finishes the job.
 */
export async function addSite(services: Services, workspace: Workspace, input: AddSiteInput) {
  const now = services.clock.now();
  const siteId = input.siteId ?? newId();
  const hosts = [...new Set((input.domains ?? []).map((d) => d.toLowerCase()))];
  const { domains } = platformCollections(services);
  for (const host of hosts) {
    const holder = await domains.findOne({ _id: host });
    if (holder && holder.siteId !== siteId) throw new ConflictError(`Domain already in use: ${host}`);
  }
  await claimDomains(services, workspace._id, siteId, hosts);

  const site: Site = { _id: siteId, workspaceId: workspace._id, name: input.name, domains: hosts, quotas: {}, createdAt: now, updatedAt: now };
  await platformCollections(services).sites.updateOne({ _id: siteId }, { $setOnInsert: site }, { upsert: true });

  const ctx = createContext(services, { workspace, site }, systemPrincipal('site provisioning'), { id: `provision:${siteId}`, ip: '127.0.0.1' });
  for (const feature of services.features) await feature.provisionWorkspace?.(ctx, input);
  await services.changeFeed.publish([topics.site(siteId), ...hosts.map(topics.host)]);
  return site;
}

/**
 * Creates a workspace in-process (the bootstrap's default workspace, before any worker runs; test
 * fixtures). `POST /tenants` goes through the workspace actor instead (`provisioning.ts`).
 * Creates a workspace, its database (with every feature's indexes) and its first site.
 * Steps are idempotent by id, so a retry after a crash finishes the job instead of duplicating it.
 */
export async function createWorkspace(services: Services, input: CreateWorkspaceInput) {
  const now = services.clock.now();
  const workspaceId = input.workspaceId ?? newId();
  const { workspaces, domains } = platformCollections(services);
  for (const host of input.domains ?? []) {
    if (await domains.findOne({ _id: host.toLowerCase() })) throw new ConflictError(`Domain already in use: ${host}`);
  }

  const workspace: Workspace = {
    _id: workspaceId,
    name: input.name,
    status: 'active',
    dbName: `${services.config.DB_PREFIX}ws_${workspaceId}`,
    quotas: {},
    indexVersion: workspaceIndexVersion(services.features),
    createdAt: now,
    updatedAt: now,
  };
  await workspaces.updateOne({ _id: workspaceId }, { $setOnInsert: workspace }, { upsert: true });
  await ensureIndexes(services.workspaceDb(workspace), workspaceIndexSpecs(services.features));
  const site = await addSite(services, workspace, { ...input, name: input.siteName ?? input.name, siteId: input.siteId });
  return { workspace, site };
}
