import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedWorkspace, startBackupWorld, waitForState, type BackupWorld, type Seeded } from './backup-support.ts';

describe('a backup while writes run (consistency: the write hold)', () => {
  let bw: BackupWorld;
  let s: Seeded;
  beforeAll(async () => {
    bw = await startBackupWorld({ worker: true });
    s = await seedWorkspace(bw.world, 'backup-writes.example.test', { entries: 3, mediaBytes: [2000] });
  }, 120_000);
  afterAll(async () => {
    await bw?.world.close();
  });

  it('holds changes (423, reads served) while it copies; the snapshot holds exactly the writes answered before the hold, each whole', async () => {
    const answers: { title: string; status: number; id?: string }[] = [];
    let reads = 0;
    let stop = false;
    // One writer, one request at a time: answers arrive in order, so "before the hold" is exact.
    const writer = (async () => {
      for (let i = 0; !stop; i++) {
        const res = await s.manage('POST', '/content', { title: `During ${i}`, status: 'published' });
        answers.push({ title: `During ${i}`, status: res.statusCode, id: res.statusCode === 201 ? res.json().id : undefined });
      }
    })();
    const reader = (async () => {
      while (!stop) {
        const res = await s.manage('GET', '/content?limit=1');
        expect(res.statusCode).toBe(200);
        reads++;
      }
    })();
    while (answers.length < 5) await new Promise((r) => setTimeout(r, 20));
    const started = await bw.call('POST', `/tenants/${s.workspaceId}/backups`);
    expect(started.statusCode).toBe(202);
    const backup = await waitForState(bw.call, `/tenants/${s.workspaceId}/backups/${started.json().backup.id}`, 'backup', ['succeeded', 'failed']);
    expect(backup.state, backup.error).toBe('succeeded');
    // The hold ends with the backup's last step, a moment after its row says succeeded: writes accepted again.
    const afterBackup = answers.length;
    while (answers.slice(afterBackup).filter((a) => a.status === 201).length < 3) await new Promise((r) => setTimeout(r, 20));
    stop = true;
    await Promise.all([writer, reader]);

    const statuses = answers.map((a) => a.status);
    expect(new Set(statuses)).toEqual(new Set([201, 423]));
    const firstHeld = statuses.indexOf(423);
    const lastHeld = statuses.lastIndexOf(423);
    // One window: accepted, then refused while the copy ran, then accepted again.
    expect(statuses.slice(firstHeld, lastHeld + 1).every((status) => status === 423)).toBe(true);
    expect(reads).toBeGreaterThan(0);
    const before = answers.slice(0, firstHeld).map((a) => a.id!);
    const after = answers.slice(lastHeld + 1).map((a) => a.id!);
    expect(after.length).toBeGreaterThan(0);

    const restore = await bw.call('POST', `/tenants/${s.workspaceId}/restore`, { backupId: backup.id });
    expect(restore.statusCode, restore.body).toBe(202);
    const done = await waitForState(bw.call, `/tenants/${s.workspaceId}/restores/${restore.json().restore.id}`, 'restore', ['succeeded', 'failed']);
    expect(done.state, done.error).toBe('succeeded');

    const db = bw.world.services.mongo.db(s.dbName);
    const entries = await db
      .collection('content_entries')
      .find({ title: /^During / })
      .toArray();
    expect(entries.map((e) => String(e._id)).sort()).toEqual([...before].sort());
    // Never half a write: each entry the snapshot holds has the revisions of the states it left (its current state is its own).
    for (const entry of await db.collection('content_entries').find({}).toArray()) {
      expect(await db.collection('content_revisions').countDocuments({ entryId: entry._id, version: { $lt: entry.version } })).toBe(entry.version - 1);
    }
    for (const id of after) expect((await s.manage('GET', `/content/${id}`)).statusCode).toBe(404);
  }, 180_000);
});
