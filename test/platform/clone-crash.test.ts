import { describe, expect, it } from 'vitest';
import { kill9 } from '../support/worker-process.ts';
import { eventually } from '../support/polling.ts';
import { asCloned, dumpDatabase, mediaDigests, seedWorkspace, waitForState, withoutFixed, useCrashWorld } from './backup-support.ts';
import { newAdmin, waitForWorkspace, workspaceRow } from './support.ts';
import { backupCollections } from '../../services/platform/backup/model.ts';
import { beginWorkspaceDeletion, cancelWorkspaceWork } from '../../services/platform/deletion.ts';

const FILES = 60;

describe('a worker killed with SIGKILL in the middle of a clone; a deletion stops a running backup and restore', () => {
  const crash = useCrashWorld('clone-crash.example.test', FILES);

  it('resumes on a new worker to the same end state', async () => {
    const { bw, s, crew } = crash;
    const db = bw.world.services.mongo.db(s.dbName);
    const first = await crew.spawn();
    const started = await bw.call('POST', `/tenants/${s.workspaceId}/backups`);
    const backup = await waitForState(bw.call, `/tenants/${s.workspaceId}/backups/${started.json().backup.id}`, 'backup', ['succeeded', 'failed'], 180_000);
    expect(backup.state, backup.error).toBe('succeeded');
    const before = await dumpDatabase(db);
    const mediaBefore = await mediaDigests(db);

    const res = await bw.call('POST', '/tenants', { name: 'Crash clone', domains: ['clone-crash-b.example.test'], admin: newAdmin, fromBackup: backup.id });
    expect(res.statusCode, res.body).toBe(202);
    const { tenant, site } = res.json();
    // Killed as soon as the first part is loaded (the rest, media last, follows).
    await eventually(
      async () => ((await workspaceRow(bw.world, tenant.id))?.clone?.doneParts?.length ?? 0) > 0,
      'the clone to load its first part',
      120_000,
      5,
    );
    await kill9(first);
    expect((await workspaceRow(bw.world, tenant.id))?.status).toBe('provisioning');

    await crew.spawn();
    const row = await waitForWorkspace(bw.world, tenant.id, (w) => w.status !== 'provisioning', 180_000);
    expect(row.status, row.clone?.error).toBe('active');
    const clone = bw.world.services.mongo.db(row.dbName);
    expect(withoutFixed(await dumpDatabase(clone))).toEqual(asCloned(before, s.siteId, site.id));
    expect(await mediaDigests(clone)).toEqual(mediaBefore);
  }, 600_000);

  it('a deletion cancels the running backup of the workspace and ends its running restore', async () => {
    const { bw, s, crew } = crash;
    // No worker while the deletion's first steps run (in process, as the actor runs them), so both are still `running` then.
    await crew.stopAll();
    const other = await seedWorkspace(bw.world, 'clone-crash-c.example.test', { entries: 2, mediaBytes: [1000] });
    const { backups, restores } = backupCollections(bw.world.services);
    await crew.spawn();
    const b = await bw.call('POST', `/tenants/${other.workspaceId}/backups`);
    const otherBackup = await waitForState(bw.call, `/tenants/${other.workspaceId}/backups/${b.json().backup.id}`, 'backup', ['succeeded', 'failed'], 180_000);
    expect(otherBackup.state).toBe('succeeded');
    await crew.stopAll();

    const running = await bw.call('POST', `/tenants/${s.workspaceId}/backups`);
    expect(running.statusCode, running.body).toBe(202);
    const backupId = running.json().backup.id;
    const restore = await bw.call('POST', `/tenants/${other.workspaceId}/restore`, { backupId: otherBackup.id });
    expect(restore.statusCode, restore.body).toBe(202);
    for (const id of [s.workspaceId, other.workspaceId]) {
      await beginWorkspaceDeletion(bw.world.services, id, false);
      await cancelWorkspaceWork(bw.world.services, id);
    }
    // Both end at once (their workflows terminated, the backup's stored parts removed): control.ts `stopWorkspaceBackups`.
    expect(await backups.findOne({ _id: backupId })).toMatchObject({ state: 'cancelled', error: 'Cancelled: the workspace was deleted' });
    expect(await restores.findOne({ _id: restore.json().restore.id })).toMatchObject({ state: 'failed', error: 'Cancelled: the workspace was deleted' });

    // A worker then finds nothing to resume: the backup stays cancelled, its hold released; the restore never suspends the workspace.
    await crew.spawn();
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((await backups.findOne({ _id: backupId }))?.state).toBe('cancelled');
    expect((await workspaceRow(bw.world, s.workspaceId))?.writeHold ?? null).toBeNull();
    expect((await workspaceRow(bw.world, other.workspaceId))?.status).toBe('deleting');
  }, 600_000);
});
