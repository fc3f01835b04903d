import { createHash, randomBytes } from 'node:crypto';
import { GridFSBucket } from 'mongodb';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  dumpDatabase,
  indexSpecs,
  mediaDigests,
  seedWorkspace,
  startBackupWorld,
  untar,
  waitForState,
  type BackupWorld,
  type Seeded,
} from './backup-support.ts';
import { workspaceRow } from './support.ts';
import { checkHistory } from '../support/histories.ts';
import { backupWorkflowId, restoreWorkflowId } from '../../workflows/contracts/backup.ts';

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('workspace backups and restore (real engines, in-process worker)', () => {
  let bw: BackupWorld;
  let a: Seeded;
  let b: Seeded;
  beforeAll(async () => {
    bw = await startBackupWorld({ worker: true });
    a = await seedWorkspace(bw.world, 'backup-a.example.test');
    b = await seedWorkspace(bw.world, 'backup-b.example.test', { entries: 2, mediaBytes: [1000] });
  }, 120_000);
  afterAll(async () => {
    await bw?.world.close();
  });

  const db = (s: Seeded) => bw.world.services.mongo.db(s.dbName);
  const backupOf = async (s: Seeded) => {
    const started = await bw.call('POST', `/tenants/${s.workspaceId}/backups`);
    expect(started.statusCode, started.body).toBe(202);
    expect(started.json().backup.state).toBe('running');
    return waitForState(bw.call, `/tenants/${s.workspaceId}/backups/${started.json().backup.id}`, 'backup', ['succeeded', 'failed', 'cancelled']);
  };

  it('backs up every collection and media file, downloads as a tar whose manifest counts and checksums hold, and restores it exactly', async () => {
    // Two files written straight into the bucket, bigger than one insert of the restore's (4 MB of
    // chunks, read into buffers it reuses): 9.5 MB at the default chunk size (three reads, the last
    // short), 8 MB in chunks of 1 MB (exactly two, then an empty read).
    const bucket = new GridFSBucket(db(a), { bucketName: 'media_files' });
    for (const [id, bytes, chunkSizeBytes] of [
      ['big-default-chunks', 9_500_000, undefined],
      ['big-1mb-chunks', 8 * 1024 * 1024, 1024 * 1024],
    ] as const) {
      await new Promise((resolve, reject) =>
        bucket
          .openUploadStreamWithId(id as never, `${id}.bin`, chunkSizeBytes ? { chunkSizeBytes } : {})
          .on('finish', resolve)
          .on('error', reject)
          .end(randomBytes(bytes)),
      );
    }
    const before = await dumpDatabase(db(a));
    const mediaBefore = await mediaDigests(db(a));
    expect(Object.keys(mediaBefore)).toHaveLength(4);
    const indexesBefore = await indexSpecs(db(a));
    expect(indexesBefore['content_entries'].length).toBeGreaterThan(5);
    expect(indexesBefore['media_files.chunks'].length).toBe(2);

    const backup = await backupOf(a);
    expect(backup.state, backup.error).toBe('succeeded');
    expect(backup.size).toBeGreaterThan(700_000);
    expect(backup.progress.mediaFilesDone).toBe(4);
    expect(backup.progress.collectionsDone).toBe(backup.progress.collections);
    expect((await workspaceRow(bw.world, a.workspaceId))?.writeHold ?? null).toBeNull();

    const download = await bw.call('GET', `/tenants/${a.workspaceId}/backups/${backup.id}/download`);
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-type']).toBe('application/x-tar');
    expect(Number(download.headers['content-length'])).toBe(download.rawPayload.length);
    const files = untar(download.rawPayload);
    const manifest = JSON.parse(files.get('manifest.json')!.toString('utf8'));
    expect([...files.keys()][0]).toBe('manifest.json');
    expect(manifest).toMatchObject({ formatVersion: 1, workspaceId: a.workspaceId, backupId: backup.id });
    for (const collection of manifest.collections) {
      expect(await db(a).collection(collection.name).countDocuments({})).toBe(collection.documents);
      expect(sha(files.get(collection.file)!)).toBe(collection.sha256);
      expect(files.get(collection.file)!.toString('utf8').split('\n').filter(Boolean)).toHaveLength(collection.documents);
    }
    expect(manifest.media).toHaveLength(4);
    for (const media of manifest.media) expect(`${media.bytes}:${sha(files.get(media.file)!)}`).toBe(`${media.bytes}:${media.sha256}`);

    // Changes after the snapshot: an entry changed, one added, a media file deleted, a typed document gone.
    const list = (await a.manage('GET', '/content?limit=5')).json().data;
    expect((await a.manage('PATCH', `/content/${list[0].id}`, { title: 'Changed after the backup', expectedVersion: list[0].version })).statusCode).toBe(200);
    expect((await a.manage('POST', '/content', { title: 'Added after the backup' })).statusCode).toBe(201);
    const media = (await a.manage('GET', '/media')).json().data;
    expect((await a.manage('DELETE', `/media/${media[0].id}?permanent=true`)).statusCode).toBeLessThan(300);
    await db(a)
      .collection('backup_types')
      .deleteOne({ _id: 'text-id' as never });
    await db(a).collection('added_later').insertOne({ siteId: a.siteId });
    expect(await dumpDatabase(db(a))).not.toEqual(before);

    const restore = await bw.call('POST', `/tenants/${a.workspaceId}/restore`, { backupId: backup.id });
    expect(restore.statusCode, restore.body).toBe(202);
    const done = await waitForState(bw.call, `/tenants/${a.workspaceId}/restores/${restore.json().restore.id}`, 'restore', ['succeeded', 'failed']);
    expect(done.state, done.error).toBe('succeeded');
    const { client } = bw.world.services.temporal;
    await checkHistory(client.workflow.getHandle(backupWorkflowId(a.workspaceId, backup.id)), 'backup');
    await checkHistory(client.workflow.getHandle(restoreWorkflowId(a.workspaceId, done.id)), 'restore');
    expect(await dumpDatabase(db(a))).toEqual(before);
    expect(await mediaDigests(db(a))).toEqual(mediaBefore);
    // Each collection the restore dropped and loaded has its indexes again, and no other.
    expect(await indexSpecs(db(a))).toMatchObject(indexesBefore);
    expect((await workspaceRow(bw.world, a.workspaceId))?.status).toBe('active');
    // Served as restored, nothing stale: the changed title is gone from the list, the bytes are back.
    const titles = (await a.manage('GET', '/content?limit=200')).json().data.map((e: { title: string }) => e.title);
    expect(titles).not.toContain('Changed after the backup');
    expect(titles).not.toContain('Added after the backup');
    const file = await bw.world.app.inject({ url: `/media/files/${media[0].id}/file.pdf`, headers: { host: a.host } });
    expect(file.statusCode).toBe(200);
  }, 240_000);

  it('refuses a foreign, replaced, incomplete or truncated archive with a 409 naming why, fails a restore of a tampered one before any change, and changes nothing', async () => {
    const backup = await backupOf(b);
    expect(backup.state, backup.error).toBe('succeeded');
    const before = await dumpDatabase(db(b));
    const restores = async () => (await bw.world.services.platformDb.collection('restores').countDocuments({ workspaceId: b.workspaceId })) as number;
    const restoresBefore = await restores();

    // Foreign: a backup of another workspace.
    const foreign = await bw.call('POST', `/tenants/${a.workspaceId}/restore`, { backupId: backup.id });
    expect(foreign.statusCode).toBe(409);
    expect(foreign.json().error).toMatch(/another workspace/);

    const folder = join(bw.backupDir, b.workspaceId, backup.id, 'collections');
    const target = join(
      folder,
      readdirSync(folder).find((name) => name.startsWith('content_entries'))!,
    );
    const original = readFileSync(target);

    // Truncated (one byte short) or missing: the route sees it without reading the parts.
    writeFileSync(target, original.subarray(0, original.length - 1));
    const truncated = await bw.call('POST', `/tenants/${b.workspaceId}/restore`, { backupId: backup.id });
    expect(truncated.statusCode).toBe(409);
    expect(truncated.json().error).toMatch(/corrupted: collections\/content_entries\.ndjson does not have the size/);
    rmSync(target);
    const missing = await bw.call('POST', `/tenants/${b.workspaceId}/restore`, { backupId: backup.id });
    expect(missing.statusCode).toBe(409);
    expect(missing.json().error).toMatch(/missing collections\/content_entries\.ndjson/);
    expect(await restores()).toBe(restoresBefore);

    // Tampered: one byte of one collection file flipped (same size). Only its checksum tells, which
    // the workflow's first step reads before anything changes: the restore ends `failed` naming why.
    const changed = Buffer.from(original);
    changed[10] = changed[10] === 0x41 ? 0x42 : 0x41;
    writeFileSync(target, changed);
    const tampered = await bw.call('POST', `/tenants/${b.workspaceId}/restore`, { backupId: backup.id });
    expect(tampered.statusCode, tampered.body).toBe(202);
    const failed = await waitForState(bw.call, `/tenants/${b.workspaceId}/restores/${tampered.json().restore.id}`, 'restore', ['succeeded', 'failed']);
    expect(failed.state).toBe('failed');
    expect(failed.error).toBe('Backup archive is corrupted: collections/content_entries.ndjson does not match its checksum');
    expect(failed.progress).toEqual({ collectionsDone: 0, documents: 0, mediaFiles: 0 });
    expect(await dumpDatabase(db(b))).toEqual(before);
    const row = await workspaceRow(bw.world, b.workspaceId);
    expect(row?.status).toBe('active');

    // A replaced manifest (even a well-formed one) is not the one recorded.
    writeFileSync(target, original);
    const manifestPath = join(bw.backupDir, b.workspaceId, backup.id, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    writeFileSync(manifestPath, JSON.stringify({ ...manifest, collections: manifest.collections.slice(1) }));
    const replaced = await bw.call('POST', `/tenants/${b.workspaceId}/restore`, { backupId: backup.id });
    expect(replaced.statusCode).toBe(409);
    expect(replaced.json().error).toMatch(/manifest/);
    expect(await dumpDatabase(db(b))).toEqual(before);
  }, 120_000);

  it('lists backups by cursor, refuses a second one while one runs, deletes a finished one with its archive', async () => {
    const backup = await backupOf(b);
    const first = await bw.call('GET', `/tenants/${b.workspaceId}/backups?limit=1`);
    expect(first.statusCode).toBe(200);
    expect(first.json().data).toHaveLength(1);
    const pages = [first.json()];
    while (pages[pages.length - 1].page.nextCursor) {
      pages.push(
        (await bw.call('GET', `/tenants/${b.workspaceId}/backups?limit=1&cursor=${encodeURIComponent(pages[pages.length - 1].page.nextCursor)}`)).json(),
      );
    }
    expect(pages.flatMap((p) => p.data.map((x: { id: string }) => x.id))).toContain(backup.id);

    const running = await bw.call('POST', `/tenants/${b.workspaceId}/backups`);
    expect(running.statusCode).toBe(202);
    const again = await bw.call('POST', `/tenants/${b.workspaceId}/backups`);
    expect(again.statusCode).toBe(409);
    expect((await bw.call('DELETE', `/tenants/${b.workspaceId}/backups/${running.json().backup.id}`)).statusCode).toBe(409);
    const cancelled = await bw.call('POST', `/tenants/${b.workspaceId}/backups/${running.json().backup.id}/cancel`);
    expect([202, 409]).toContain(cancelled.statusCode);
    const ended = await waitForState(bw.call, `/tenants/${b.workspaceId}/backups/${running.json().backup.id}`, 'backup', ['succeeded', 'cancelled']);
    expect((await workspaceRow(bw.world, b.workspaceId))?.writeHold ?? null).toBeNull();
    if (ended.state === 'cancelled') {
      expect(() => readdirSync(join(bw.backupDir, b.workspaceId, ended.id))).toThrow();
      await checkHistory(bw.world.services.temporal.client.workflow.getHandle(backupWorkflowId(b.workspaceId, ended.id)), 'backup-cancelled');
    }

    const removed = await bw.call('DELETE', `/tenants/${b.workspaceId}/backups/${backup.id}`);
    expect(removed.json()).toEqual({ id: backup.id, deleted: true });
    expect(() => readdirSync(join(bw.backupDir, b.workspaceId, backup.id))).toThrow();
    expect((await bw.call('GET', `/tenants/${b.workspaceId}/backups/${backup.id}`)).statusCode).toBe(404);
    expect((await bw.call('GET', `/tenants/nope/backups`)).statusCode).toBe(404);
  }, 120_000);
});
