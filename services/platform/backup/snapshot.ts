import { unviewed } from '../../core/site-config.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Binary } from 'mongodb';
import type { Services } from '../../core/context.ts';
import type { BackupEnd, BackupPlan, BackupRef, MediaBatchResult } from '../../../workflows/contracts/backup.ts';
import { platformCollections } from '../../tenancy/platform-db.ts';
import { publishWorkspaceChange } from '../lifecycle.ts';
import { backupCollections, type BackupRow } from './model.ts';
import { backupPrefix, collectionFile, documentLine, hashing, idFromText, idToText, MANIFEST_FILE, manifestBytes, mediaFile, objectKey } from './archive.ts';
import { backupStore } from './store.ts';
import { BackupStopError, databaseLayout, recordParts, runningBackup, workspaceOf, type Beat } from './steps.ts';

/**
 * The write hold's drain: after every gateway has acknowledged the hold, a change already past the
 * check (one request, its queued audit row) finishes within this (docs/backups.md, consistency).
 */
export const WRITE_DRAIN_MS = 1000;
/** A collection's NDJSON is handed to the store in chunks of about this size. */
const CHUNK_BYTES = 1 << 20;
/** Media files per activity call (and at most MEDIA_BATCH_BYTES): a cancel is honoured between calls. */
const MEDIA_BATCH_FILES = 200;
const MEDIA_BATCH_BYTES = 256 * 1024 * 1024;
/** Media files copied side by side. */
const MEDIA_PARALLEL = 4;
/** GridFS chunks per cursor batch (4 MB at the default 255 KB chunk): a file's memory while it is copied. */
const CHUNK_BATCH = 16;

/**
 * Step 1: hold the workspace's writes (the row's `writeHold`, pushed to every gateway and
 * acknowledged, then the drain), and decide what is copied: every collection, every GridFS bucket.
 * Repeating it (a retry) holds again under the same backup and gives the same plan.
 */
export async function beginBackup(services: Services, ref: BackupRef, beat: Beat): Promise<BackupPlan> {
  const row = await runningBackup(services, ref.backupId);
  if (!row) throw new BackupStopError('Backup is no longer running', 'BackupWorkspaceState');
  const held = await platformCollections(services).workspaces.findOneAndUpdate(
    {
      _id: ref.workspaceId,
      // A final backup copies a deleted workspace before its purge (nothing writes to it any more).
      status: { $in: row.trigger === 'final' ? ['deleted'] : ['active', 'suspended'] },
      ...(row.trigger === 'final' ? { purgedAt: { $exists: false } } : {}),
      $or: [{ writeHold: null }, { writeHold: { $exists: false } }, { 'writeHold.backupId': ref.backupId }],
    },
    { $set: { writeHold: { backupId: ref.backupId, since: services.clock.now() } } },
    { returnDocument: 'after' },
  );
  if (!held) throw new BackupStopError('Workspace is not active, or another backup or restore holds it', 'BackupWorkspaceState');
  await publishWorkspaceChange(services, ref.workspaceId);
  beat();
  await sleep(WRITE_DRAIN_MS);
  const plan = await databaseLayout(services, held);
  const db = services.workspaceDb(held);
  let mediaFiles = 0;
  for (const bucket of plan.buckets) mediaFiles += await db.collection(`${bucket}.files`).countDocuments({});
  await backupCollections(services).backups.updateOne(
    { _id: ref.backupId },
    { $set: { 'progress.collections': plan.collections.length, 'progress.mediaFiles': mediaFiles, buckets: plan.buckets, updatedAt: services.clock.now() } },
  );
  return plan;
}

/**
 * Step 2: each collection in turn, every document as one canonical-EJSON line streamed into the
 * store. A retry skips the collections already recorded and rewrites the one it was in whole; a
 * cancel asked in between stops it (answers false).
 */
export async function copyCollections(services: Services, ref: BackupRef, names: readonly string[], beat: Beat): Promise<boolean> {
  const { parts } = backupCollections(services);
  const recorded = new Set((await parts.find({ backupId: ref.backupId, kind: 'collection' }, { projection: { name: 1 } }).toArray()).map((p) => p.name));
  for (const name of names) {
    const row = await runningBackup(services, ref.backupId);
    if (!row || row.cancelRequested) return false;
    if (!recorded.has(name)) await copyCollection(services, row, name, beat);
  }
  return true;
}

/** Marks a backup's whole-collection reads, which read everything by design (test/foundation/index-coverage.test.ts). */
export const WHOLE_COLLECTION_READ = 'backup: whole collection';

async function copyCollection(services: Services, row: BackupRow, name: string, beat: Beat): Promise<void> {
  const db = services.workspaceDb(await workspaceOf(services, row.workspaceId));
  let documents = 0;
  async function* lines(): AsyncGenerator<Buffer> {
    let pending: string[] = [];
    let size = 0;
    // By its stored name (a config kind's view would read its `site_config` documents instead).
    const cursor = unviewed(db).collection(name).find({}, { batchSize: 1000, comment: WHOLE_COLLECTION_READ });
    // One batch read ahead: the next batch is asked for before this one is written (the database
    // and the store work at the same time; memory is two batches).
    let more = cursor.hasNext();
    try {
      while (await more) {
        const docs = cursor.readBufferedDocuments();
        more = cursor.hasNext();
        more.catch(() => undefined);
        for (const doc of docs) {
          const line = documentLine(doc);
          pending.push(line);
          size += line.length;
          documents++;
          if (size >= CHUNK_BYTES) {
            yield Buffer.from(pending.join(''));
            pending = [];
            size = 0;
            beat();
          }
        }
      }
    } finally {
      await more.catch(() => undefined);
      await cursor.close();
    }
    if (pending.length > 0) yield Buffer.from(pending.join(''));
  }
  const file = collectionFile(name);
  const { body, result } = hashing(lines());
  await backupStore(services.config).put(objectKey(row, file), body);
  await recordParts(services, row, [{ kind: 'collection', file, name, documents, bytes: result.bytes, sha256: result.sha256 }]);
}

/**
 * Step 3, per bucket, one batch per call: each GridFS file's bytes in id order, resuming after the
 * last one recorded. `MEDIA_PARALLEL` files are copied side by side (round trips to the database
 * overlap; memory is one chunk batch each), and the batch's parts are recorded together once all
 * are whole: a worker killed before that copies the batch again.
 */
export async function copyMediaBatch(services: Services, ref: BackupRef, bucket: string, beat: Beat): Promise<MediaBatchResult> {
  const row = await runningBackup(services, ref.backupId);
  if (!row || row.cancelRequested) return { copied: 0, done: true };
  const db = services.workspaceDb(await workspaceOf(services, ref.workspaceId));
  const after = row.mediaAfter?.[bucket];
  const found = await db
    .collection<{ _id: unknown; length: number }>(`${bucket}.files`)
    .find(after ? { _id: { $gt: idFromText(after) as never } } : {}, { projection: { _id: 1, length: 1 } })
    .sort({ _id: 1 })
    .limit(MEDIA_BATCH_FILES)
    .toArray();
  // Cut at MEDIA_BATCH_BYTES (at least one file), so a call stays short whatever the files' sizes.
  let total = 0;
  const files = found.filter((doc) => (total += doc.length) - doc.length < MEDIA_BATCH_BYTES);
  const chunks = db.collection<{ n: number; data: Binary }>(`${bucket}.chunks`);
  const store = backupStore(services.config);
  const copyFile = async (doc: { _id: unknown; length: number }) => {
    const id = idToText(doc._id);
    const file = mediaFile(bucket, id);
    // The chunks straight from their index (files_id, n), as GridFS reads them, with the same checks:
    // every chunk in order, and the file's length in the end.
    async function* bytes(): AsyncGenerator<Buffer> {
      let n = 0;
      let length = 0;
      const cursor = chunks.find({ files_id: doc._id }, { sort: { n: 1 }, projection: { n: 1, data: 1 }, batchSize: CHUNK_BATCH });
      for await (const chunk of cursor) {
        if (chunk.n !== n++) throw new Error(`GridFS file ${id} of ${bucket}: chunk ${n - 1} is missing`);
        const data = chunk.data.buffer;
        length += data.length;
        beat();
        yield Buffer.from(data.buffer, data.byteOffset, data.byteLength);
      }
      if (length !== doc.length) throw new Error(`GridFS file ${id} of ${bucket} holds ${length} bytes, not ${doc.length}`);
    }
    const { body, result } = hashing(bytes());
    await store.put(objectKey(row, file), body);
    return { kind: 'media' as const, file, name: bucket, id, documents: 0, bytes: result.bytes, sha256: result.sha256 };
  };
  const parts = [];
  for (let i = 0; i < files.length; i += MEDIA_PARALLEL) parts.push(...(await Promise.all(files.slice(i, i + MEDIA_PARALLEL).map(copyFile))));
  if (parts.length > 0) await recordParts(services, row, parts, { [`mediaAfter.${bucket}`]: parts[parts.length - 1].id });
  return { copied: parts.length, done: found.length < MEDIA_BATCH_FILES && files.length === found.length };
}

/** Releases the hold this backup set (nothing when another holds it), pushed to every gateway. */
async function releaseHold(services: Services, ref: BackupRef) {
  await platformCollections(services).workspaces.updateOne({ _id: ref.workspaceId, 'writeHold.backupId': ref.backupId }, { $set: { writeHold: null } });
  await publishWorkspaceChange(services, ref.workspaceId);
}

/** Step 4: the manifest (from the recorded parts), then `succeeded` with its checksum and size, then the hold released. */
export async function finishBackup(services: Services, ref: BackupRef): Promise<void> {
  const row = await runningBackup(services, ref.backupId);
  if (row) {
    const { parts, backups } = backupCollections(services);
    const finishedAt = services.clock.now();
    const cursor = parts.find({ backupId: row._id }).sort({ kind: 1, _id: 1 });
    const { body, result } = hashing(manifestBytes(row, finishedAt, row.buckets ?? [], cursor));
    await backupStore(services.config).put(objectKey(row, MANIFEST_FILE), body);
    await backups.updateOne(
      { _id: row._id, state: 'running' },
      { $set: { state: 'succeeded', manifestSha256: result.sha256, finishedAt, updatedAt: finishedAt }, $inc: { 'progress.bytes': result.bytes } },
    );
  }
  await releaseHold(services, ref);
}

/** A cancelled or failed backup: what it stored is removed, the row says why, the hold is released. */
export async function endBackup(services: Services, ref: BackupRef, end: BackupEnd): Promise<void> {
  const { parts, backups } = backupCollections(services);
  await backupStore(services.config).remove(backupPrefix(ref.workspaceId, ref.backupId));
  await parts.deleteMany({ backupId: ref.backupId });
  const now = services.clock.now();
  await backups.updateOne({ _id: ref.backupId, state: 'running' }, { $set: { state: end.state, error: end.error, finishedAt: now, updatedAt: now } });
  await releaseHold(services, ref);
}
