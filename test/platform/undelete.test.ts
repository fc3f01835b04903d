import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/world.ts';
import { platformCollections } from '../../services/tenancy/platform-db.ts';
import { workspaceWorkflowId } from '../../workflows/contracts/workspace.ts';
import { scheduleWorkflowId } from '../../services/content/schedule.ts';
import { databaseNames, newAdmin, tenantAdmin, waitForWorkspace, workspaceRow } from './support.ts';
import { dumpDatabase, mediaDigests, seedWorkspace, startBackupWorld, waitForState, type OperatorCall } from './backup-support.ts';
import { eventually } from '../support/polling.ts';
import { recordFinalBackup } from '../../services/platform/backup/control.ts';
import { backupCollections } from '../../services/platform/backup/model.ts';
import { purgeWorkspace } from '../../services/platform/purge.ts';
import { reconcileWorkspaces } from '../../services/platform/lifecycle-reconciler.ts';

const PURGED = { error: 'Workspace was purged: its data is gone and it cannot be undeleted' };
const DAY = 86_400_000;

/** The key's per-minute request counters (`rl` of the site settings, a `site_state` document) move with every call, not with the data. */
function withoutRateCounters(dump: Record<string, string[]>): Record<string, string[]> {
  const settings = (dump.site_state ?? []).map((line) => {
    const { rl: _counters, ...rest } = JSON.parse(line) as Record<string, unknown>;
    return JSON.stringify(rest);
  });
  return { ...dump, site_state: settings };
}

// Each test runs several lifecycle round trips through the worker: on the shared 2-core machine one can take a minute.
describe('deletion with a grace period: undelete, purge on time or when confirmed', { timeout: 180_000 }, () => {
  let world: World;
  let call: OperatorCall;
  const on = (host: string, url: string, headers: Record<string, string> = {}, method = 'GET', payload?: unknown) =>
    world.app.inject({ method: method as never, url, headers: { host, ...headers }, payload: payload as never });

  beforeAll(async () => {
    // The routes wait for the end state (a busy machine's worker may need more than the default 5 s).
    ({ world, call } = await startBackupWorld({ worker: true, env: { LIFECYCLE_WAIT_MS: '60000' } }));
  });
  afterAll(() => world?.close());

  it('delete then undelete within the grace period: entries, media, keys, sessions, schedules and domains as they were', async () => {
    const seeded = await seedWorkspace(world, 'undo.example.test', { entries: 5, mediaBytes: [300_000] });
    const db = world.services.mongo.db(seeded.dbName);
    const origin = `http://${seeded.host}`;
    const login = await on(seeded.host, '/api/auth/login', { origin }, 'POST', tenantAdmin);
    expect(login.statusCode).toBe(200);
    const cookie = String(login.headers['set-cookie']).split(';')[0];
    // A scheduled entry: its schedule workflow is stopped by the deletion and started again by the undelete.
    const scheduled = await seeded.manage('POST', '/content', { title: 'Later', status: 'draft' });
    const entryId = scheduled.json().id as string;
    expect((await seeded.manage('PUT', `/content/${entryId}/schedule`, { publishOn: '2099-01-01T00:00:00.000Z', unpublishOn: null })).statusCode).toBe(200);
    // The audit rows of those writes are queued (never awaited), and the key's rate counter too: both land first.
    await world.services.audit.settled();
    const entries = withoutRateCounters(await dumpDatabase(db));
    const media = await mediaDigests(db);
    const schedule = world.services.temporal.client.workflow.getHandle(scheduleWorkflowId(seeded.workspaceId, entryId));

    const asked = Date.now();
    const deleted = await call('DELETE', `/tenants/${seeded.workspaceId}`);
    expect(deleted.statusCode).toBe(202);
    const { tenant } = deleted.json();
    expect(tenant.status).toBe('deleted');
    // The default grace period: seven days from the request.
    expect(Date.parse(tenant.purgeAt) - asked).toBeGreaterThanOrEqual(7 * DAY - 1000);
    expect(Date.parse(tenant.purgeAt) - asked).toBeLessThan(7 * DAY + 60_000);
    // It stopped answering at once; its work stopped, its domains freed, its data kept.
    expect((await seeded.manage('GET', '/content')).statusCode).toBe(404);
    expect((await on(seeded.host, '/api/auth/me', { cookie })).statusCode).toBe(404);
    expect((await schedule.describe()).status.name).toBe('TERMINATED');
    expect(await platformCollections(world.services).domains.countDocuments({ workspaceId: seeded.workspaceId })).toBe(0);
    expect(await databaseNames(world)).toContain(seeded.dbName);
    // Listed among the deleted, with the purge's date; its actor waits on the purge timer.
    const listed = (await call('GET', '/tenants?status=deleted&limit=200')).json().data;
    expect(listed).toContainEqual(expect.objectContaining({ id: seeded.workspaceId, status: 'deleted', purgeAt: tenant.purgeAt }));
    const actor = world.services.temporal.client.workflow.getHandle(workspaceWorkflowId(seeded.workspaceId));
    expect((await actor.describe()).status.name).toBe('RUNNING');

    const undone = await call('POST', `/tenants/${seeded.workspaceId}/undelete`);
    expect(undone.statusCode).toBe(202);
    expect(undone.json()).toEqual({ tenant: expect.objectContaining({ id: seeded.workspaceId, status: 'active' }), domainsNotRestored: [] });
    expect(undone.json().tenant.purgeAt).toBeUndefined();
    expect(await platformCollections(world.services).domains.findOne({ _id: seeded.host })).toMatchObject({
      workspaceId: seeded.workspaceId,
      siteId: seeded.siteId,
    });
    // Every document and media byte as it was; the key and the session work as before.
    expect(withoutRateCounters(await dumpDatabase(db))).toEqual(entries);
    expect(await mediaDigests(db)).toEqual(media);
    const list = await seeded.manage('GET', '/content?limit=100');
    expect(list.statusCode).toBe(200);
    expect(list.json().data).toHaveLength(6);
    expect((await on(seeded.host, '/api/auth/me', { cookie })).statusCode).toBe(200);
    // The schedule runs again, and the actor ended (no purge pending).
    const resumed = world.services.temporal.client.workflow.getHandle(scheduleWorkflowId(seeded.workspaceId, entryId));
    expect((await resumed.describe()).status.name).toBe('RUNNING');
    await eventually(async () => (await actor.describe()).status.name === 'COMPLETED', 'the actor to end', 30_000, 100);
    // Undeleting a live workspace changes nothing.
    expect((await call('POST', `/tenants/${seeded.workspaceId}/undelete`)).json()).toEqual(undone.json());
    // Seeding a workspace with media and two lifecycle round trips through the worker: minutes on a busy machine.
  }, 240_000);

  it('a domain another site claimed meanwhile is not restored and is named; the rest comes back', async () => {
    const created = await call('POST', '/tenants', { name: 'Twin', domains: ['twin.example.test', 'www.twin.example.test'], admin: newAdmin });
    const { tenant, site } = created.json();
    expect((await call('DELETE', `/tenants/${tenant.id}`)).json().tenant.status).toBe('deleted');
    const thief = (await call('POST', '/tenants', { name: 'Thief', domains: ['www.twin.example.test'], admin: newAdmin })).json();
    expect(thief.tenant.status).toBe('active');

    const undone = await call('POST', `/tenants/${tenant.id}/undelete`);
    expect(undone.statusCode).toBe(202);
    expect(undone.json()).toMatchObject({ tenant: { status: 'active' }, domainsNotRestored: ['www.twin.example.test'] });
    const { domains, sites } = platformCollections(world.services);
    expect(await domains.findOne({ _id: 'twin.example.test' })).toMatchObject({ siteId: site.id });
    expect(await domains.findOne({ _id: 'www.twin.example.test' })).toMatchObject({ workspaceId: thief.tenant.id });
    expect((await sites.findOne({ _id: site.id }))?.domains).toEqual(['twin.example.test']);
    expect((await on('twin.example.test', '/api/v1/openapi.json')).statusCode).toBe(200);
    expect((await workspaceRow(world, tenant.id))?.undeletion?.domainsNotRestored).toEqual(['www.twin.example.test']);
  });

  it('purges at the end of a short grace period: the database gone, the row kept with purgedAt; undelete is then a 409 changing nothing', async () => {
    const { tenant } = (await call('POST', '/tenants', { name: 'Brief', domains: ['brief.example.test'], admin: newAdmin })).json();
    const row = (await workspaceRow(world, tenant.id))!;
    // A first write makes the database.
    await world.services.mongo.db(row.dbName).collection('probe').insertOne({ siteId: 'x' });
    const asked = Date.now();
    const deleted = await call('DELETE', `/tenants/${tenant.id}?grace=5s`);
    expect(deleted.json().tenant).toMatchObject({ status: 'deleted' });
    const answered = deleted.json().tenant;
    const purged = await waitForWorkspace(world, tenant.id, (w) => Boolean(w.purgedAt), 60_000);
    // Not before five seconds after the request: by the actor's timer, at the date the answer gave
    // (or within the deletion itself, when its steps took longer than the grace on a busy machine).
    expect(purged.purgedAt!.getTime() - asked).toBeGreaterThanOrEqual(5000);
    if (answered.purgeAt) {
      expect(Date.parse(answered.purgeAt) - asked).toBeGreaterThanOrEqual(5000);
      expect(Date.parse(answered.purgeAt) - asked).toBeLessThan(15_000);
      expect(purged.purgedAt!.getTime()).toBeGreaterThanOrEqual(Date.parse(answered.purgeAt));
    }
    expect(purged.status).toBe('deleted');
    expect(await databaseNames(world)).not.toContain(row.dbName);
    const shown = (await call('GET', `/tenants/${tenant.id}`)).json().tenant;
    expect(shown).toMatchObject({ status: 'deleted', databaseDropped: true, purgedAt: purged.purgedAt!.toISOString() });
    expect(shown.purgeAt).toBeUndefined();

    const refused = await call('POST', `/tenants/${tenant.id}/undelete`);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual(PURGED);
    expect(await workspaceRow(world, tenant.id)).toEqual(purged);
    expect(await platformCollections(world.services).domains.countDocuments({ workspaceId: tenant.id })).toBe(0);
    expect(await databaseNames(world)).not.toContain(row.dbName);
  });

  it('purges at once when the operator confirms it (dropDatabase=true), also a workspace deleted earlier', async () => {
    const { tenant } = (await call('POST', '/tenants', { name: 'Now', domains: ['now.example.test'], admin: newAdmin })).json();
    const row = (await workspaceRow(world, tenant.id))!;
    await world.services.mongo.db(row.dbName).collection('probe').insertOne({ siteId: 'x' });
    expect((await call('DELETE', `/tenants/${tenant.id}`)).json().tenant.purgeAt).toBeDefined();
    const confirmed = await call('DELETE', `/tenants/${tenant.id}?dropDatabase=true`);
    expect(confirmed.statusCode).toBe(202);
    expect(confirmed.json().tenant).toMatchObject({ status: 'deleted', databaseDropped: true, purgedAt: expect.any(String) });
    expect(await databaseNames(world)).not.toContain(row.dbName);
    expect((await call('POST', `/tenants/${tenant.id}/undelete`)).statusCode).toBe(409);
  });

  it('takes a final backup before the purge when asked; the backup is listed and kept', async () => {
    const seeded = await seedWorkspace(world, 'final.example.test', { entries: 3, mediaBytes: [2000] });
    const deleted = await call('DELETE', `/tenants/${seeded.workspaceId}?grace=1s&finalBackup=true`);
    expect(deleted.json().tenant.status).toBe('deleted');
    const purged = await waitForWorkspace(world, seeded.workspaceId, (w) => Boolean(w.purgedAt), 90_000);
    const backupId = purged.deletion?.finalBackupId;
    expect(backupId).toBeDefined();
    const backup = (await call('GET', `/tenants/${seeded.workspaceId}/backups/${backupId}`)).json().backup;
    expect(backup).toMatchObject({ state: 'succeeded', trigger: 'final' });
    expect(backup.progress.documents).toBeGreaterThanOrEqual(3);
    expect(backup.progress.mediaFiles).toBe(1);
    expect(await databaseNames(world)).not.toContain(seeded.dbName);
    expect((await call('GET', `/tenants/${seeded.workspaceId}`)).json().tenant).toMatchObject({ finalBackupId: backupId, purgedAt: expect.any(String) });
  });

  it('holds a due purge whose final backup failed (data kept, reason shown) until the operator decides', async () => {
    const { tenant } = (await call('POST', '/tenants', { name: 'Held', domains: ['held.example.test'], admin: newAdmin })).json();
    const row = (await workspaceRow(world, tenant.id))!;
    await world.services.mongo.db(row.dbName).collection('probe').insertOne({ siteId: 'x' });
    expect((await call('DELETE', `/tenants/${tenant.id}?finalBackup=true`)).json().tenant.status).toBe('deleted');
    // What a final backup that failed leaves when the purge comes due.
    const failed = await recordFinalBackup(world.services, tenant.id);
    await backupCollections(world.services).backups.updateOne({ _id: failed._id }, { $set: { state: 'failed', error: 'disk full' } });
    const { workspaces } = platformCollections(world.services);
    await workspaces.updateOne({ _id: tenant.id }, { $set: { 'deletion.finalBackupId': failed._id, 'deletion.purgeAt': new Date(Date.now() - 1000) } });
    await purgeWorkspace(world.services, tenant.id);
    expect(await databaseNames(world)).toContain(row.dbName);
    const shown = (await call('GET', `/tenants/${tenant.id}`)).json().tenant;
    expect(shown).toMatchObject({ status: 'deleted', purgeHeld: 'Final backup failed: disk full', finalBackupId: failed._id });
    expect(shown.purgeAt).toBeUndefined();
    expect(shown.purgedAt).toBeUndefined();
    // The operator purges without it.
    const purged = await call('DELETE', `/tenants/${tenant.id}?dropDatabase=true&finalBackup=false`);
    expect(purged.json().tenant).toMatchObject({ status: 'deleted', purgedAt: expect.any(String) });
    expect(purged.json().tenant.purgeHeld).toBeUndefined();
    expect(await databaseNames(world)).not.toContain(row.dbName);
  });

  it('purges an overdue workspace whose actor lost its timer (the worker reconciler)', async () => {
    const { tenant } = (await call('POST', '/tenants', { name: 'Lost', domains: ['lost.example.test'], admin: newAdmin })).json();
    const row = (await workspaceRow(world, tenant.id))!;
    await world.services.mongo.db(row.dbName).collection('probe').insertOne({ siteId: 'x' });
    expect((await call('DELETE', `/tenants/${tenant.id}`)).json().tenant.status).toBe('deleted');
    // The run holding the timer is gone (terminated by hand), and the date has passed.
    await world.services.temporal.client.workflow.getHandle(workspaceWorkflowId(tenant.id)).terminate('lost timer');
    await platformCollections(world.services).workspaces.updateOne({ _id: tenant.id }, { $set: { 'deletion.purgeAt': new Date(Date.now() - 60_000) } });
    const { resumed } = await reconcileWorkspaces(world.services, { graceMs: 0 });
    expect(resumed).toBeGreaterThanOrEqual(1);
    const purged = await waitForWorkspace(world, tenant.id, (w) => Boolean(w.purgedAt), 60_000);
    expect(purged.deletion?.purgeAt).toBeUndefined();
    expect(await databaseNames(world)).not.toContain(row.dbName);
  });

  it('cancels a running backup of the workspace when it is deleted', async () => {
    const seeded = await seedWorkspace(world, 'busy.example.test', { entries: 3, mediaBytes: [4_000_000, 4_000_000] });
    const started = await call('POST', `/tenants/${seeded.workspaceId}/backups`);
    expect(started.statusCode).toBe(202);
    const backupId = started.json().backup.id;
    // The backup's first step holds the writes, then drains for a second: the deletion comes meanwhile.
    await waitForWorkspace(world, seeded.workspaceId, (w) => w.writeHold?.backupId === backupId, 30_000);
    expect((await call('DELETE', `/tenants/${seeded.workspaceId}`)).json().tenant.status).toBe('deleted');
    const backup = await waitForState(call, `/tenants/${seeded.workspaceId}/backups/${backupId}`, 'backup', ['cancelled', 'failed', 'succeeded']);
    expect(backup).toMatchObject({ state: 'cancelled', error: 'Cancelled: the workspace was deleted' });
    expect((await workspaceRow(world, seeded.workspaceId))?.writeHold ?? null).toBeNull();
    // The undeleted workspace takes writes again (no hold left behind).
    expect((await call('POST', `/tenants/${seeded.workspaceId}/undelete`)).json().tenant.status).toBe('active');
    expect((await seeded.manage('POST', '/content', { title: 'After', status: 'draft' })).statusCode).toBe(201);
  });

  it('refuses a bad grace and unknown ids with nothing changed', async () => {
    const { tenant } = (await call('POST', '/tenants', { name: 'Bad', domains: ['bad.example.test'], admin: newAdmin })).json();
    const before = await workspaceRow(world, tenant.id);
    const bad = await call('DELETE', `/tenants/${tenant.id}?grace=soon`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatch(/grace/);
    expect((await call('DELETE', `/tenants/${tenant.id}?grace=400d`)).statusCode).toBe(400);
    expect(await workspaceRow(world, tenant.id)).toEqual(before);
    expect((await call('POST', '/tenants/no-such-tenant/undelete')).statusCode).toBe(404);
  });
});
