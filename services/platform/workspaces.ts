import type { Services } from '../core/context.ts';
import type { ProvisionInput } from '../core/feature.ts';
import { createContext } from '../core/context.ts';
import { newId } from '../core/ids.ts';
import { ConflictError } from '../core/errors.ts';
import { systemPrincipal } from '../access/principal.ts';
import { ensureIndexes } from './indexes.ts';
import { PLATFORM_COLLECTIONS, type DomainRow, type Site, type Workspace } from './model.ts';

export function platformCollections(services: Pick<Services, 'platformDb'>) {
  const db = services.platformDb;
  return {
    workspaces: db.collection<Workspace>(PLATFORM_COLLECTIONS.workspaces),
    sites: db.collection<Site>(PLATFORM_COLLECTIONS.sites),
    domains: db.collection<DomainRow>(PLATFORM_COLLECTIONS.domains),
  };
}

export interface CreateWorkspaceInput extends ProvisionInput {
  name: string;
  siteName?: string;
  domains?: string[];
  /** Fixed ids are for the bootstrap default workspace only. */
  workspaceId?: string;
  siteId?: string;
}

/**
 * Creates a workspace, its database (with every feature's indexes), its first site and domains,
 * then lets each feature provision it (the access feature creates the administrator).
 * Steps are idempotent by id, so a retry after a crash finishes the job instead of duplicating it.
 */
export async function createWorkspace(services: Services, input: CreateWorkspaceInput) {
  const { features } = services;
  const now = services.clock.now();
  const workspaceId = input.workspaceId ?? newId();
  const siteId = input.siteId ?? newId();
  const { workspaces, sites, domains } = platformCollections(services);
  const domainNames = (input.domains ?? []).map((d) => d.toLowerCase());

  for (const host of domainNames) {
    const taken = await domains.findOne({ _id: host });
    if (taken && taken.siteId !== siteId) throw new ConflictError(`Domain already in use: ${host}`);
  }

  const workspace: Workspace = {
    _id: workspaceId,
    name: input.name,
    status: 'active',
    dbName: `${services.config.DB_PREFIX}ws_${workspaceId}`,
    quotas: {},
    createdAt: now,
    updatedAt: now,
  };
  await workspaces.updateOne({ _id: workspaceId }, { $setOnInsert: workspace }, { upsert: true });

  const db = services.workspaceDb(workspace);
  await ensureIndexes(db, features.flatMap((f) => f.indexes ?? []));

  const site: Site = {
    _id: siteId,
    workspaceId,
    name: input.siteName ?? input.name,
    domains: domainNames,
    quotas: {},
    createdAt: now,
    updatedAt: now,
  };
  await sites.updateOne({ _id: siteId }, { $setOnInsert: site }, { upsert: true });
  for (const host of domainNames) {
    await domains.updateOne({ _id: host }, { $setOnInsert: { _id: host, siteId, workspaceId } }, { upsert: true });
  }

  const ctx = createContext(services, { workspace, site }, systemPrincipal('workspace provisioning'), {
    id: `provision:${workspaceId}`,
    ip: '127.0.0.1',
  });
  for (const feature of features) await feature.provisionWorkspace?.(ctx, input);
  return { workspace, site };
}
