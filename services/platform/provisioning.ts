import { moveLegacySiteConfig } from '../core/site-config.ts';
import type { Services } from '../core/context.ts';
import { ConflictError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { DEFAULT_CLUSTER } from '../core/clusters.ts';
import { placementTopic } from '../core/placement.ts';
import { hashPassword } from '../access/passwords.ts';
import { upgradeIndexes } from '../tenancy/indexes.ts';
import { moveLegacySiteState } from '../core/site-state.ts';
import { workspaceIndexSpecs, workspaceIndexVersion } from '../tenancy/index-version.ts';
import { hostNames, type Workspace } from '../core/tenants.ts';
import { runProvisionSteps } from '../../workflows/contracts/workspace.ts';
import { addSite } from './workspaces.ts';
import { platformCollections } from '../tenancy/platform-db.ts';
import { publishWorkspaceChange } from './lifecycle.ts';
import { claimDomains, holdsDomains, releaseWorkspaceDomains } from './domains.ts';

export interface WorkspaceRequest {
  name: string;
  siteName?: string;
  domains: readonly string[];
  admin: { email: string; password: string; name?: string; platformOperator?: boolean };
  /** The bootstrap's default site, and a clone's first site (its id chosen with the others); every other site gets a generated id. */
  siteId?: string;
  /** A clone (backup/clone.ts): its workflow, not the actor's provision steps, fills the workspace. */
  clone?: Workspace['clone'];
  /** The cluster its database goes on (`placement/rule.ts`); the default one when absent. */
  cluster?: string;
}

/**
 * A workspace is asked for: written as `provisioning` (with what to provision and the
 * administrator's password already hashed, so no secret reaches Temporal's history), and its
 * domains claimed, all or none, so a taken domain is a 409 at once and nothing of the request stays.
 * The provision steps do the rest: the actor's (`POST /tenants`), or `provisionInProcess`.
 */
export async function requestWorkspace(services: Services, input: WorkspaceRequest): Promise<Workspace> {
  const { workspaces } = platformCollections(services);
  const hosts = hostNames(input.domains);
  const now = services.clock.now();
  const workspaceId = newId();
  const siteId = input.siteId ?? newId();
  const { email, name, password, platformOperator } = input.admin;
  const workspace: Workspace = {
    _id: workspaceId,
    name: input.name,
    status: 'provisioning',
    dbName: `${services.config.DB_PREFIX}ws_${workspaceId}`,
    ...(input.cluster && input.cluster !== DEFAULT_CLUSTER ? { cluster: input.cluster } : {}),
    quotas: {},
    provisioning: {
      siteId,
      siteName: input.siteName ?? input.name,
      domains: hosts,
      admin: { email, name, passwordHash: await hashPassword(password), ...(platformOperator ? { platformOperator } : {}) },
    },
    ...(input.clone ? { clone: input.clone } : {}),
    createdAt: now,
    updatedAt: now,
  };
  await workspaces.insertOne(workspace);
  // Every process routes its database to its cluster from the first write on (core/placement.ts).
  if (workspace.cluster) await services.changeFeed.publish(placementTopic(workspace.dbName, workspace.cluster));
  try {
    await claimDomains(services, { workspaceId, siteId }, hosts);
  } catch (error) {
    await workspaces.deleteOne({ _id: workspaceId, status: 'provisioning' });
    throw error;
  }
  return workspace;
}

async function provisioningRow(services: Services, workspaceId: string) {
  const row = await platformCollections(services).workspaces.findOne({ _id: workspaceId });
  return row?.status === 'provisioning' && row.provisioning && !row.clone ? { ...row, provisioning: row.provisioning } : null;
}

/**
 * Step 1: the database. Nothing is made here any more: MongoDB makes a database with its first
 * collection, and each collection with its indexes at its first write (`core/first-write.ts`), so a
 * new workspace holds only what it uses. False when there is nothing (more) to provision.
 */
export async function provisionWorkspaceDatabase(services: Services, workspaceId: string): Promise<boolean> {
  return (await provisioningRow(services, workspaceId)) !== null;
}

/**
 * Step 2: the first site and what each feature provisions in it (the administrator), each part
 * idempotent by id. Its domains were claimed with the request; only a gateway that died between
 * writing the row and claiming leaves them unclaimed (the reconciler's resend lands here), and
 * should another site have taken one meanwhile, provisioning is abandoned: `deleted`, nothing kept.
 */
export async function provisionWorkspaceSite(services: Services, workspaceId: string): Promise<void> {
  const row = await provisioningRow(services, workspaceId);
  if (!row) return;
  const spec = row.provisioning;
  if (!(await holdsDomains(services, spec.siteId, spec.domains))) {
    try {
      await claimDomains(services, { workspaceId, siteId: spec.siteId }, spec.domains);
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      await releaseWorkspaceDomains(services, workspaceId);
      await platformCollections(services).workspaces.updateOne(
        { _id: workspaceId, status: 'provisioning' },
        { $set: { status: 'deleted', updatedAt: services.clock.now() }, $unset: { provisioning: '' } },
      );
      services.log.warn({ workspaceId, reason: error.message }, 'workspace provisioning abandoned');
      return;
    }
  }
  await addSite(services, row, { name: spec.siteName, siteId: spec.siteId, domains: spec.domains, admin: spec.admin });
}

/** Step 3: the workspace answers. The spec (with the password hash; a clone's too) is no longer kept. */
export async function activateProvisionedWorkspace(services: Services, workspaceId: string): Promise<void> {
  await platformCollections(services).workspaces.updateOne(
    { _id: workspaceId, status: 'provisioning' },
    {
      $set: { status: 'active', indexVersion: workspaceIndexVersion(services.features), updatedAt: services.clock.now() },
      $unset: { provisioning: '', clone: '' },
    },
  );
  await publishWorkspaceChange(services, workspaceId);
}

/**
 * The actor's `provision` steps run in this process (the same `runProvisionSteps`): for the
 * bootstrap's default workspace, at a first start before any worker runs, and test fixtures
 * (`createWorkspace` in test/support/world.ts).
 * Should this process die half-way, the row still says `provisioning` and the worker's reconciler
 * hands the rest to the actor.
 */
export async function provisionInProcess(services: Services, workspaceId: string): Promise<Workspace> {
  await runProvisionSteps(
    {
      provisionWorkspaceDatabase: () => provisionWorkspaceDatabase(services, workspaceId),
      provisionWorkspaceSite: () => provisionWorkspaceSite(services, workspaceId),
      activateProvisionedWorkspace: () => activateProvisionedWorkspace(services, workspaceId),
    },
    workspaceId,
  );
  const workspace = await platformCollections(services).workspaces.findOne({ _id: workspaceId });
  if (workspace?.status !== 'active') throw new Error(`workspace ${workspaceId} was not provisioned`);
  return workspace;
}

/**
 * The `indexes` command: brings an existing workspace database to this release's index version:
 * documents of collections a release merged moved first (core/site-state.ts; idempotent, a retry
 * finishes a move cut short), then the indexes (tenancy/indexes.ts `upgradeIndexes`).
 */
export async function upgradeWorkspaceIndexes(services: Services, workspaceId: string): Promise<void> {
  const version = workspaceIndexVersion(services.features);
  const row = await platformCollections(services).workspaces.findOne({ _id: workspaceId, status: { $in: ['active', 'suspended'] } });
  if (!row || row.indexVersion === version) return;
  const db = services.workspaceDb(row);
  const moves = await moveLegacySiteState(db);
  if (moves.dropped.length > 0) services.log.info({ workspaceId, ...moves }, 'state documents moved into site_state');
  const config = await moveLegacySiteConfig(db);
  if (config.dropped.length > 0) services.log.info({ workspaceId, ...config }, 'configuration documents moved into site_config');
  const { dropped } = await upgradeIndexes(db, workspaceIndexSpecs(services.features));
  if (dropped.length > 0) services.log.info({ workspaceId, dropped }, 'superseded workspace indexes dropped');
  await platformCollections(services).workspaces.updateOne({ _id: workspaceId }, { $set: { indexVersion: version } });
}
