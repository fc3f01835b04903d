import type { Services } from '../../core/context.ts';
import { moveLegacySiteConfig } from '../../core/site-config.ts';
import { moveLegacySiteState } from '../../core/site-state.ts';
import { ConflictError, NotFoundError, ServiceUnavailableError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import type { Site, Workspace } from '../../core/tenants.ts';
import { cloneWorkflowId, cloneWorkflowType, type CloneRef } from '../../../workflows/contracts/clone.ts';
import type { BackupPlan } from '../../../workflows/contracts/backup.ts';
import { DEFAULT_SITE_ID, platformCollections } from '../../tenancy/platform-db.ts';
import { releaseWorkspaceDomains } from '../domains.ts';
import { activateProvisionedWorkspace, requestWorkspace, type WorkspaceRequest } from '../provisioning.ts';
import { backupCollections, type BackupRow } from './model.ts';
import { deleteBackup, idleWorkspace, recordBackup } from './control.ts';
import { cloneLeftBehind, cloneRewrite, remapSiteIds } from './clone-fixups.ts';
import { loadBucket, loadCollection } from './load.ts';
import { freshenSite, verifiedManifest } from './restore.ts';
import { backupStore } from './store.ts';
import { BackupVerificationError, verifyArchive } from './verify.ts';
import { BackupStopError, type Beat } from './steps.ts';

// A new workspace from a backup or from a living workspace (docs/backups.md, "Clone"): the archive
// is verified before anything is written, the workspace asked for like any other (its domains
// claimed, all or none), then the clone workflow loads the archive with restore's reader
// (load.ts) through the clone's fix-ups (clone-fixups.ts) and activates it.

export type CloneRequest = Omit<WorkspaceRequest, 'siteId' | 'clone'> & { fromBackup?: string; fromWorkspace?: string };

/** Where a clone comes from, refused (404/409) before anything is written: a verified backup, or an idle workspace. */
async function cloneSource(
  services: Services,
  platformWorkspaceId: string,
  input: CloneRequest,
): Promise<{ sourceWorkspaceId: string; backupId: string | null }> {
  let source: { sourceWorkspaceId: string; backupId: string | null };
  if (input.fromBackup) {
    const backup = await backupCollections(services).backups.findOne({ _id: input.fromBackup });
    if (!backup) throw new NotFoundError('Backup not found');
    try {
      await verifyArchive(backupStore(services.config), backup, backup.workspaceId);
    } catch (error) {
      if (error instanceof BackupVerificationError) throw new ConflictError(error.message);
      throw error;
    }
    source = { sourceWorkspaceId: backup.workspaceId, backupId: backup._id };
  } else {
    await idleWorkspace(services, input.fromWorkspace!);
    source = { sourceWorkspaceId: input.fromWorkspace!, backupId: null };
  }
  if (source.sourceWorkspaceId === platformWorkspaceId) throw new ConflictError('The platform workspace cannot be cloned');
  return source;
}

/**
 * `POST /tenants { fromBackup | fromWorkspace }`: the source checked, each of its sites given a new
 * id (the first, oldest, takes the request's domains and site name), the workspace recorded as
 * `provisioning` with its domains claimed, and the clone workflow started (`clone:<workspaceId>`).
 * Temporal unreachable: the request is undone (domains released, row removed) and 503.
 */
export async function startClone(
  services: Services,
  platformWorkspaceId: string,
  input: CloneRequest,
): Promise<{ workspace: Workspace; site: { id: string; name: string } }> {
  const source = await cloneSource(services, platformWorkspaceId, input);
  const sites = await platformCollections(services).sites.find({ workspaceId: source.sourceWorkspaceId }).sort({ _id: 1 }).toArray();
  if (sites.length === 0 || sites.some((site) => site._id === DEFAULT_SITE_ID)) throw new ConflictError('This workspace cannot be cloned');
  const mapped = sites.map((site) => ({ from: site._id, to: newId(), name: site.name }));
  const siteName = input.siteName ?? mapped[0].name;
  mapped[0].name = siteName;
  const { fromBackup: _b, fromWorkspace: _w, ...request } = input;
  const workspace = await requestWorkspace(services, {
    ...request,
    siteName,
    siteId: mapped[0].to,
    clone: { ...source, ownBackup: source.backupId === null, sites: mapped },
  });
  const ref: CloneRef = { workspaceId: workspace._id, sourceWorkspaceId: source.sourceWorkspaceId, ...(source.backupId ? { backupId: source.backupId } : {}) };
  try {
    await services.temporal.client.workflow.start(cloneWorkflowType, {
      taskQueue: services.temporal.taskQueue,
      workflowId: cloneWorkflowId(workspace._id),
      args: [ref],
    });
  } catch (error) {
    services.log.error({ err: error, workspaceId: workspace._id }, 'clone workflow not started');
    await releaseWorkspaceDomains(services, workspace._id);
    await platformCollections(services).workspaces.deleteOne({ _id: workspace._id, status: 'provisioning' });
    throw new ServiceUnavailableError('The workflow engine is unavailable');
  }
  return { workspace, site: { id: mapped[0].to, name: siteName } };
}

type Cloning = Workspace & { clone: NonNullable<Workspace['clone']> };

/** The new workspace, still being cloned; a step that finds it otherwise (deleted meanwhile) stops for good. */
async function cloningRow(services: Services, ref: CloneRef): Promise<Cloning> {
  const row = await platformCollections(services).workspaces.findOne({ _id: ref.workspaceId });
  if (!row?.clone || row.status !== 'provisioning') throw new BackupStopError(`Workspace is ${row?.status ?? 'gone'}`, 'BackupWorkspaceState');
  return row as Cloning;
}

const siteMap = (row: Cloning) => new Map(row.clone.sites.map((site) => [site.from, site.to]));

async function sourceBackup(services: Services, ref: CloneRef, backupId: string): Promise<BackupRow> {
  const row = await backupCollections(services).backups.findOne({ _id: backupId, workspaceId: ref.sourceWorkspaceId });
  if (!row) throw new BackupStopError('Backup not found', 'BackupVerification');
  return row;
}

/**
 * `fromWorkspace`, first step: a backup of the source recorded for this clone (`trigger: clone`),
 * or the one already recorded (a retry). The workflow runs it as a child, like a scheduled one.
 */
export async function cloneSourceBackup(services: Services, ref: CloneRef): Promise<string> {
  const row = await cloningRow(services, ref);
  if (row.clone.backupId) return row.clone.backupId;
  let backup: BackupRow;
  try {
    backup = await recordBackup(services, ref.sourceWorkspaceId, 'clone');
  } catch (error) {
    if (error instanceof ConflictError || error instanceof NotFoundError) throw new BackupStopError(`Source: ${error.message}`, 'BackupWorkspaceState');
    throw error;
  }
  const { workspaces } = platformCollections(services);
  const set = await workspaces.updateOne({ _id: ref.workspaceId, 'clone.backupId': null }, { $set: { 'clone.backupId': backup._id } });
  if (set.modifiedCount === 1) return backup._id;
  await backupCollections(services).backups.deleteOne({ _id: backup._id, state: 'running' });
  return (await cloningRow(services, ref)).clone.backupId!;
}

/** Before anything is written into the new workspace: the whole archive verified (verify.ts), and what is loaded. */
export async function verifyClone(services: Services, ref: CloneRef, backupId: string, beat: Beat): Promise<BackupPlan> {
  await cloningRow(services, ref);
  const timer = setInterval(beat, 1000);
  try {
    const manifest = await verifyArchive(backupStore(services.config), await sourceBackup(services, ref, backupId), ref.sourceWorkspaceId).catch(
      (error: unknown) => {
        throw error instanceof BackupVerificationError ? new BackupStopError(error.message, 'BackupVerification') : error;
      },
    );
    const leftBehind = cloneLeftBehind(services.features);
    return { collections: manifest.collections.map((c) => c.name).filter((name) => !leftBehind.has(name)), buckets: manifest.buckets };
  } finally {
    clearInterval(timer);
  }
}

async function loadParts(
  services: Services,
  ref: CloneRef,
  backupId: string,
  parts: readonly string[],
  load: (row: Cloning, source: Parameters<typeof loadCollection>[1], part: string) => Promise<number>,
): Promise<void> {
  const backup = await sourceBackup(services, ref, backupId);
  const source = { store: backupStore(services.config), row: backup, manifest: await verifiedManifest(services, backup) };
  for (const part of parts) {
    const row = await cloningRow(services, ref);
    if (row.clone.doneParts?.includes(part)) continue;
    await load(row, source, part);
    await platformCollections(services).workspaces.updateOne({ _id: ref.workspaceId }, { $addToSet: { 'clone.doneParts': part } });
  }
}

/** Each collection loaded into the new database through the clone's fix-ups; a retry skips those done and reloads the one it was in. */
export async function cloneCollections(services: Services, ref: CloneRef, backupId: string, names: readonly string[], beat: Beat): Promise<void> {
  const now = services.clock.now();
  await loadParts(services, ref, backupId, names, (row, source, name) =>
    loadCollection(services.workspaceDb(row), source, name, beat, cloneRewrite(services, name, siteMap(row), now)),
  );
}

/** Each bucket's chunks rebuilt, file ids remapped as the `.files` documents were. */
export async function cloneBuckets(services: Services, ref: CloneRef, backupId: string, buckets: readonly string[], beat: Beat): Promise<void> {
  await loadParts(services, ref, backupId, buckets, (row, source, bucket) =>
    loadBucket(services.workspaceDb(row), source, bucket, beat, (id) => remapSiteIds(id, siteMap(row))),
  );
}

/**
 * The last step: the new sites recorded (the first with the request's domains, claimed at the
 * request), each feature's `afterClone` (access: the request's administrator given the first site;
 * content: the schedules' timers), each site's caches fresh, the backup taken for the clone removed, then the workspace
 * `active` (its clone spec dropped with the provisioning one). Each part is idempotent; a retry
 * after the activation finds nothing to do.
 */
export async function finishClone(services: Services, ref: CloneRef, backupId: string): Promise<void> {
  const { workspaces, sites } = platformCollections(services);
  const current = await workspaces.findOne({ _id: ref.workspaceId });
  if (current?.status === 'active' && !current.clone) return;
  const row = await cloningRow(services, ref);
  const spec = row.provisioning!;
  const now = services.clock.now();
  const db = services.workspaceDb(row);
  // An archive made before these shared collections loaded the collections they replaced: moved now.
  await moveLegacySiteState(db);
  await moveLegacySiteConfig(db);
  const made: Site[] = [];
  for (const [i, mapped] of row.clone.sites.entries()) {
    const site: Site = {
      _id: mapped.to,
      workspaceId: row._id,
      name: mapped.name,
      domains: i === 0 ? spec.domains : [],
      quotas: {},
      createdAt: now,
      updatedAt: now,
    };
    await sites.updateOne({ _id: site._id }, { $setOnInsert: site }, { upsert: true });
    made.push(site);
  }
  const clone = { sourceWorkspaceId: row.clone.sourceWorkspaceId, sites: made, admin: spec.admin };
  for (const feature of services.features) await feature.clone?.afterClone?.(services, row, clone);
  for (const site of made) await freshenSite(services, db, site);
  await removeOwnBackup(services, row, backupId);
  await activateProvisionedWorkspace(services, ref.workspaceId);
}

async function removeOwnBackup(services: Services, row: Workspace, backupId: string | null) {
  if (!row.clone?.ownBackup || !backupId) return;
  const backup = await backupCollections(services).backups.findOne({ _id: backupId, workspaceId: row.clone.sourceWorkspaceId });
  if (backup && backup.state !== 'running') await deleteBackup(services, backup);
}

/**
 * A clone that cannot finish leaves nothing half made: its domains released, its database dropped,
 * its sites removed, the row `deleted` with the reason (`clone.error`), and the backup taken for it
 * removed. A workspace deleted meanwhile is left to its deletion.
 */
export async function failClone(services: Services, ref: CloneRef, backupId: string | null, error: string): Promise<void> {
  const { workspaces, sites } = platformCollections(services);
  const row = await workspaces.findOne({ _id: ref.workspaceId });
  if (row?.status === 'provisioning' && row.clone) {
    await releaseWorkspaceDomains(services, row._id);
    await services.workspaceDb(row).dropDatabase();
    await sites.deleteMany({ workspaceId: row._id });
    await workspaces.updateOne(
      { _id: row._id, status: 'provisioning' },
      { $set: { status: 'deleted', databaseDropped: true, 'clone.error': error, updatedAt: services.clock.now() }, $unset: { provisioning: '' } },
    );
  }
  if (row) await removeOwnBackup(services, row, backupId);
}
