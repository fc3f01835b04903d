import { describe, expect, it } from 'vitest';
import { GridFSBucket } from 'mongodb';
import { kill9 } from '../support/worker-process.ts';
import { eventually } from '../support/polling.ts';
import { dumpDatabase, mediaDigests, waitForState, useCrashWorld } from './backup-support.ts';
import { backupCollections } from '../../services/platform/backup/model.ts';
import { workspaceRow } from './support.ts';

/** Many files: the copy and the rebuild take long enough, even on a busy machine, for the kill to land mid-way. */
const FILES = 100;

describe('a worker killed with SIGKILL in the middle of a backup and of a restore', () => {
  const crash = useCrashWorld('backup-crash.example.test', FILES);

  it('each resumes on a new worker to the same end state', async () => {
    const { bw, s, crew } = crash;
    const db = bw.world.services.mongo.db(s.dbName);
    const before = await dumpDatabase(db);
    const mediaBefore = await mediaDigests(db);
    const { backups, restores } = backupCollections(bw.world.services);

    const first = await crew.spawn();
    const started = await bw.call('POST', `/tenants/${s.workspaceId}/backups`);
    expect(started.statusCode).toBe(202);
    const backupId = started.json().backup.id;
    // Killed as soon as the hold is set (the drain, then the copy follow): the kill lands mid-backup even on a busy machine.
    await eventually(
      async () => (await workspaceRow(bw.world, s.workspaceId))?.writeHold?.backupId === backupId,
      'the backup to hold the workspace',
      120_000,
      5,
    );
    await kill9(first);
    const cut = await backups.findOne({ _id: backupId });
    expect(cut?.state).toBe('running');
    expect(cut!.progress.mediaFilesDone).toBeLessThan(FILES + 1);

    await crew.spawn();
    const backup = await waitForState(bw.call, `/tenants/${s.workspaceId}/backups/${backupId}`, 'backup', ['succeeded', 'failed'], 180_000);
    expect(backup.state, backup.error).toBe('succeeded');
    expect(backup.progress.mediaFilesDone).toBe(FILES + 1);
    expect((await workspaceRow(bw.world, s.workspaceId))?.writeHold ?? null).toBeNull();

    // Something changes, then a restore is killed once the workspace is suspended and being replaced.
    await db.collection('content_entries').deleteMany({});
    await new GridFSBucket(db, { bucketName: 'media_files' }).delete('bulk-3' as never);
    const restore = await bw.call('POST', `/tenants/${s.workspaceId}/restore`, { backupId });
    expect(restore.statusCode, restore.body).toBe(202);
    const restoreId = restore.json().restore.id;
    // Killed as soon as the workspace is suspended for the restore (the replacing steps follow).
    await eventually(async () => (await workspaceRow(bw.world, s.workspaceId))?.status === 'suspended', 'the restore to suspend the workspace', 120_000, 5);
    await kill9(crew.children[1]);
    expect((await restores.findOne({ _id: restoreId }))?.state).toBe('running');
    expect((await workspaceRow(bw.world, s.workspaceId))?.status).toBe('suspended');

    await crew.spawn();
    const done = await waitForState(bw.call, `/tenants/${s.workspaceId}/restores/${restoreId}`, 'restore', ['succeeded', 'failed'], 180_000);
    expect(done.state, done.error).toBe('succeeded');
    expect(await dumpDatabase(db)).toEqual(before);
    expect(await mediaDigests(db)).toEqual(mediaBefore);
    expect((await workspaceRow(bw.world, s.workspaceId))?.status).toBe('active');
  }, 600_000);
});
