import type { Services } from '../core/context.ts';
import { ConflictError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { hashPassword } from '../access/passwords.ts';
import { ensureIndexes } from '../tenancy/indexes.ts';
import { workspaceIndexSpecs, workspaceIndexVersion } from '../tenancy/index-version.ts';
import type { Workspace } from '../core/tenants.ts';
import { addSite } from './workspaces.ts';
import { platformCollections } from '../tenancy/platform-db.ts';
import { publishWorkspaceChange } from './lifecycle.ts';

export interface WorkspaceRequest {
  name: string;
  siteName?: string;
  domains: string[];
  admin: { email: string; password: string; name?: string };
}

/**
 * Claims every host for the site, or none: a host held by another site undoes this call's own
 * claims and is a 409. The unique `_id` of the domain rows decides races between requests.
 */
export async function claimDomainsAtomically(services: Services, workspaceId: string, siteId: string, hosts: readonly string[]) {
  const { domains } = platformCollections(services);
  const claimed: string[] = [];
  for (const host of hosts) {
    try {
      await domains.insertOne({ _id: host, siteId, workspaceId });
      claimed.push(host);
    } catch (error) {
      if ((error as { code?: number }).code !== 11000) throw error;
      const holder = await domains.findOne({ _id: host });
      if (holder?.siteId === siteId) continue;
      await domains.deleteMany({ _id: { $in: claimed }, siteId });
      throw new ConflictError(`Domain already in use: ${host}`);
    }
  }
}

/**
 * `POST /tenants`, gateway side: writes the workspace as `provisioning` (with what to provision and
 * the administrator's password already hashed, so no secret reaches Temporal's history) and claims
 * its domains, so a taken domain is a 409 at once. The actor does the rest.
 */
export async function requestWorkspace(services: Services, input: WorkspaceRequest): Promise<Workspace> {
  const { workspaces, domains } = platformCollections(services);
  const hosts = [...new Set(input.domains.map((d) => d.toLowerCase()))];
  const taken = await domains.findOne({ _id: { $in: hosts } });
  if (taken) throw new ConflictError(`Domain already in use: ${taken._id}`);

  const now = services.clock.now();
  const workspaceId = newId();
  const siteId = newId();
  const workspace: Workspace = {
    _id: workspaceId,
    name: input.name,
    status: 'provisioning',
    dbName: `${services.config.DB_PREFIX}ws_${workspaceId}`,
    quotas: {},
    provisioning: {
      siteId,
      siteName: input.siteName ?? input.name,
      domains: hosts,
      admin: { email: input.admin.email, name: input.admin.name, passwordHash: await hashPassword(input.admin.password) },
    },
    createdAt: now,
    updatedAt: now,
  };
  await workspaces.insertOne(workspace);
  try {
    await claimDomainsAtomically(services, workspaceId, siteId, hosts);
  } catch (error) {
    await workspaces.deleteOne({ _id: workspaceId, status: 'provisioning' });
    throw error;
  }
  return workspace;
}

async function provisioningRow(services: Services, workspaceId: string) {
  const row = await platformCollections(services).workspaces.findOne({ _id: workspaceId });
  return row?.status === 'provisioning' && row.provisioning ? { ...row, provisioning: row.provisioning } : null;
}

/** Step 1: the database and its indexes. False when there is nothing (more) to provision. */
export async function provisionWorkspaceDatabase(services: Services, workspaceId: string): Promise<boolean> {
  const row = await provisioningRow(services, workspaceId);
  if (!row) return false;
  await ensureIndexes(services.workspaceDb(row), workspaceIndexSpecs(services.features));
  return true;
}

/**
 * Step 2: the first site with its domains and administrator (each part idempotent by id). If a
 * domain was lost meanwhile (a crash before the claim, and another workspace took it), provisioning
 * is abandoned: the workspace goes to `deleted` and keeps nothing.
 */
export async function provisionWorkspaceSite(services: Services, workspaceId: string): Promise<void> {
  const row = await provisioningRow(services, workspaceId);
  if (!row) return;
  const spec = row.provisioning;
  try {
    await claimDomainsAtomically(services, workspaceId, spec.siteId, spec.domains);
    await addSite(services, row, { name: spec.siteName, siteId: spec.siteId, domains: spec.domains, admin: spec.admin });
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    const { workspaces, domains } = platformCollections(services);
    await domains.deleteMany({ workspaceId });
    await workspaces.updateOne(
      { _id: workspaceId, status: 'provisioning' },
      { $set: { status: 'deleted', updatedAt: services.clock.now() }, $unset: { provisioning: '' } },
    );
    services.log.warn({ workspaceId, reason: error.message }, 'workspace provisioning abandoned');
  }
}

/** Step 3: the workspace answers. The spec (with the password hash) is no longer kept. */
export async function activateProvisionedWorkspace(services: Services, workspaceId: string): Promise<void> {
  await platformCollections(services).workspaces.updateOne(
    { _id: workspaceId, status: 'provisioning' },
    { $set: { status: 'active', indexVersion: workspaceIndexVersion(services.features), updatedAt: services.clock.now() }, $unset: { provisioning: '' } },
  );
  await publishWorkspaceChange(services, workspaceId);
}

/** The `indexes` command: brings an existing workspace database to this release's index version. */
export async function upgradeWorkspaceIndexes(services: Services, workspaceId: string): Promise<void> {
  const version = workspaceIndexVersion(services.features);
  const row = await platformCollections(services).workspaces.findOne({ _id: workspaceId, status: { $in: ['active', 'suspended'] } });
  if (!row || row.indexVersion === version) return;
  await ensureIndexes(services.workspaceDb(row), workspaceIndexSpecs(services.features));
  await platformCollections(services).workspaces.updateOne({ _id: workspaceId }, { $set: { indexVersion: version } });
}
