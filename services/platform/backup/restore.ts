import { moveLegacySiteConfig } from '../../core/site-config.ts';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from 'mongodb';
import type { Services } from '../../core/context.ts';
import type { Site } from '../../core/tenants.ts';
import { publicStateId, storedGeneration } from '../../core/public-generation.ts';
import { topics } from '../../core/topics.ts';
import type { BackupPlan, RestoreRef } from '../../../workflows/contracts/backup.ts';
import { readAccessState, settingsCollection, settingsId } from '../../access/site-settings-store.ts';
import { moveLegacySiteState, siteStateCollection } from '../../core/site-state.ts';
import { accessChanged } from '../../access/access-change.ts';
import { platformCollections } from '../../tenancy/platform-db.ts';
import { publishWorkspaceChange } from '../lifecycle.ts';
import { sendWorkspaceCommand } from '../workspace-actor.ts';
import { backupCollections, type BackupRow, type RestoreRow } from './model.ts';
import { MANIFEST_FILE, objectKey, type Manifest } from './archive.ts';
import { indexesFromText, indexesToText, loadBucket, loadCollection, type IndexKeeper } from './load.ts';
import { backupStore } from './store.ts';
import { BackupVerificationError, verifyArchive } from './verify.ts';
import { BackupStopError, databaseLayout, workspaceOf, type Beat } from './steps.ts';

async function runningRestore(services: Services, ref: RestoreRef): Promise<RestoreRow> {
  const row = await backupCollections(services).restores.findOne({ _id: ref.restoreId });
  if (!row || row.state !== 'running') throw new BackupStopError('Restore is no longer running', 'BackupWorkspaceState');
  return row;
}

async function backupRow(services: Services, ref: RestoreRef): Promise<BackupRow> {
  const row = await backupCollections(services).backups.findOne({ _id: ref.backupId, workspaceId: ref.workspaceId });
  if (!row) throw new BackupStopError('Backup not found', 'BackupVerification');
  return row;
}

/** The manifest again for a later step, refused unless it is still the one the backup recorded. */
export async function verifiedManifest(services: Services, row: BackupRow): Promise<Manifest> {
  const chunks: Buffer[] = [];
  for await (const chunk of backupStore(services.config).get(objectKey(row, MANIFEST_FILE)) as AsyncIterable<Buffer>) chunks.push(chunk);
  const bytes = Buffer.concat(chunks);
  if (createHash('sha256').update(bytes).digest('hex') !== row.manifestSha256)
    throw new BackupStopError('Backup manifest changed during the restore', 'BackupVerification');
  return JSON.parse(bytes.toString('utf8')) as Manifest;
}

/**
 * Step 1, before anything changes: the whole archive verified (verify.ts), and the plan: every
 * collection and bucket of the archive, and those the database has now but the backup had not
 * (emptied, so the workspace comes back as it was at the snapshot).
 */
export async function verifyRestore(services: Services, ref: RestoreRef, beat: Beat): Promise<BackupPlan> {
  await runningRestore(services, ref);
  const timer = setInterval(beat, 1000);
  try {
    const manifest = await verifyArchive(backupStore(services.config), await backupRow(services, ref), ref.workspaceId).catch((error: unknown) => {
      throw error instanceof BackupVerificationError ? new BackupStopError(error.message, 'BackupVerification') : error;
    });
    const now = await databaseLayout(services, await workspaceOf(services, ref.workspaceId));
    const buckets = [...new Set([...manifest.buckets, ...now.buckets])].sort();
    const chunks = new Set(buckets.map((bucket) => `${bucket}.chunks`));
    const collections = [...new Set([...manifest.collections.map((c) => c.name), ...now.collections])].filter((name) => !chunks.has(name)).sort();
    return { collections, buckets };
  } finally {
    clearInterval(timer);
  }
}

/**
 * Step 2: the workspace suspended through its actor (public API 404, every other surface 423), and
 * each site's public generation and access version noted, so they come back above what caches saw.
 */
export async function suspendForRestore(services: Services, ref: RestoreRef, beat: Beat): Promise<void> {
  const restore = await runningRestore(services, ref);
  let workspace = await workspaceOf(services, ref.workspaceId);
  if (workspace.status === 'active') await sendWorkspaceCommand(services, ref.workspaceId, { kind: 'suspend' });
  while (workspace.status === 'active') {
    beat();
    await sleep(200);
    workspace = await workspaceOf(services, ref.workspaceId);
  }
  if (workspace.status !== 'suspended') throw new BackupStopError(`Workspace is ${workspace.status}`, 'BackupWorkspaceState');
  if (restore.counters) return;
  const db = services.workspaceDb(workspace);
  const counters: NonNullable<RestoreRow['counters']> = {};
  for (const site of await platformCollections(services).sites.find({ workspaceId: ref.workspaceId }).toArray()) {
    counters[site._id] = { generation: await storedGeneration(db, site._id), accessVersion: (await readAccessState(db, site._id)).version };
  }
  await backupCollections(services).restores.updateOne({ _id: ref.restoreId }, { $set: { counters, updatedAt: services.clock.now() } });
}

/** The indexes of the collections the restore replaces, kept in its row (the first capture wins). */
function restoreIndexKeeper(services: Services, ref: RestoreRef): IndexKeeper {
  const { restores } = backupCollections(services);
  return {
    async keep(collection, current) {
      const key = Buffer.from(collection).toString('hex');
      const saved = (await restores.findOne({ _id: ref.restoreId }, { projection: { savedIndexes: 1 } }))?.savedIndexes?.[key];
      if (saved !== undefined) return indexesFromText(saved);
      const indexes = await current();
      await restores.updateOne({ _id: ref.restoreId }, { $set: { [`savedIndexes.${key}`]: indexesToText(indexes) } });
      return indexes;
    },
  };
}

/** Counts a restored part into the progress once, whatever the retries. */
async function partDone(services: Services, ref: RestoreRef, part: string, inc: Record<string, number>) {
  await backupCollections(services).restores.updateOne(
    { _id: ref.restoreId, doneParts: { $ne: part } },
    { $inc: inc, $push: { doneParts: part }, $set: { updatedAt: services.clock.now() } },
  );
}

/**
 * Step 3: each collection in turn dropped (its indexes kept in the row), the archive's documents
 * inserted in batches, its indexes built again (load.ts). A retry skips the collections done and starts the one it was in again; a restore
 * ended meanwhile (the workspace deleted) stops between two.
 */
export async function restoreCollections(services: Services, ref: RestoreRef, names: readonly string[], beat: Beat): Promise<void> {
  const restore = await runningRestore(services, ref);
  const row = await backupRow(services, ref);
  const source = { store: backupStore(services.config), row, manifest: await verifiedManifest(services, row) };
  const done = new Set(restore.doneParts ?? []);
  for (const name of names) {
    if (done.has(`collection:${name}`)) continue;
    await runningRestore(services, ref);
    const db = services.workspaceDb(await workspaceOf(services, ref.workspaceId));
    const documents = await loadCollection(db, source, name, beat, undefined, restoreIndexKeeper(services, ref));
    await partDone(services, ref, `collection:${name}`, { 'progress.collectionsDone': 1, 'progress.documents': documents });
  }
}

/** Step 4: each bucket's chunks rebuilt from its media files (the `.files` documents came back with the collections). */
export async function restoreBuckets(services: Services, ref: RestoreRef, buckets: readonly string[], beat: Beat): Promise<void> {
  const restore = await runningRestore(services, ref);
  const row = await backupRow(services, ref);
  const source = { store: backupStore(services.config), row, manifest: await verifiedManifest(services, row) };
  const done = new Set(restore.doneParts ?? []);
  for (const bucket of buckets) {
    if (done.has(`bucket:${bucket}`)) continue;
    await runningRestore(services, ref);
    const db = services.workspaceDb(await workspaceOf(services, ref.workspaceId));
    const files = await loadBucket(db, source, bucket, beat, undefined, restoreIndexKeeper(services, ref));
    await partDone(services, ref, `bucket:${bucket}`, { 'progress.mediaFiles': files });
  }
}

/** Nothing a cache holds of the site is served again: its public generation and access version move, every gateway hears it. */
export async function freshenSite(services: Services, db: Db, site: Site): Promise<void> {
  await services.publicGeneration.bump(db, site._id);
  await accessChanged({ db, site, services });
  await services.changeFeed.publish([topics.site(site._id), topics.siteContent(site._id), topics.webhookEndpoints(site._id)]);
}

/**
 * Step 5: nothing stale is served: each site's public generation and access version set above both
 * what they were before and what the archive holds, then moved (every gateway acknowledges), the
 * workspace brought back to its status before the restore through its actor, the restore `succeeded`.
 */
export async function finishRestore(services: Services, ref: RestoreRef, beat: Beat): Promise<void> {
  const restore = await runningRestore(services, ref);
  let workspace = await workspaceOf(services, ref.workspaceId);
  const db = services.workspaceDb(workspace);
  // An archive made before `site_state` or `site_config` brought back the collections they replaced: theirs are the restored documents.
  await moveLegacySiteState(db, 'replaced');
  await moveLegacySiteConfig(db, 'replaced');
  for (const site of await platformCollections(services).sites.find({ workspaceId: ref.workspaceId }).toArray()) {
    const before = restore.counters?.[site._id] ?? { generation: 0, accessVersion: 0 };
    await siteStateCollection<{ _id: string }>(db).updateOne(
      { _id: publicStateId(site._id) },
      { $max: { generation: before.generation }, $set: { siteId: site._id } },
      { upsert: true },
    );
    await settingsCollection(db).updateOne({ _id: settingsId(site._id) }, { $max: { accessVersion: before.accessVersion } });
    await freshenSite(services, db, site);
  }
  await publishWorkspaceChange(services, ref.workspaceId);
  if (restore.previousStatus === 'active' && workspace.status === 'suspended') {
    await sendWorkspaceCommand(services, ref.workspaceId, { kind: 'reactivate' });
    while (workspace.status === 'suspended') {
      beat();
      await sleep(200);
      workspace = await workspaceOf(services, ref.workspaceId);
    }
  }
  const now = services.clock.now();
  await backupCollections(services).restores.updateOne(
    { _id: ref.restoreId, state: 'running' },
    { $set: { state: 'succeeded', finishedAt: now, updatedAt: now } },
  );
}

/** A failed restore says why. Before step 2 nothing changed; after it the workspace stays suspended (never half a restore served). */
export async function failRestore(services: Services, ref: RestoreRef, error: string): Promise<void> {
  const now = services.clock.now();
  await backupCollections(services).restores.updateOne(
    { _id: ref.restoreId, state: 'running' },
    { $set: { state: 'failed', error, finishedAt: now, updatedAt: now } },
  );
}
