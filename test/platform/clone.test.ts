import { appendFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BSON } from 'mongodb';
import {
  asCloned,
  CLONE_LEFT_BEHIND,
  dumpDatabase,
  mediaDigests,
  seedWorkspace,
  startBackupWorld,
  waitForState,
  withoutFixed,
  type BackupWorld,
  type Seeded,
} from './backup-support.ts';
import { databaseNames, newAdmin, waitForWorkspace, workspaceRow } from './support.ts';
import { checkHistory } from '../support/histories.ts';
import { cloneWorkflowId } from '../../workflows/contracts/clone.ts';
import { CLONED_PASSWORD } from '../../services/access/clone.ts';
import { createWebhookSecretBox, secretBinding } from '../../services/events/secrets.ts';
import { verifyPassword } from '../../services/access/passwords.ts';
import { platformCollections } from '../../services/tenancy/platform-db.ts';
import { backupCollections } from '../../services/platform/backup/model.ts';

describe('a workspace cloned from a backup or from a living workspace (real engines, in-process worker)', () => {
  let bw: BackupWorld;
  let a: Seeded;
  beforeAll(async () => {
    bw = await startBackupWorld({ worker: true });
    a = await seedWorkspace(bw.world, 'clone-a.example.test');
    // A webhook endpoint with its sealed secret, a signed-in session: things a clone must not carry over as they are.
    const box = createWebhookSecretBox(bw.world.config.SECRET_KEY);
    // Through the service's database: endpoints are a `site_config` kind (core/site-config.ts).
    await bw.world.services
      .workspaceDb(a)
      .collection('webhook_endpoints')
      .insertOne({
        _id: 'endpoint-1' as never,
        siteId: a.siteId,
        name: 'Hook',
        url: 'https://hooks.example.test/in',
        events: ['entry.published'],
        active: true,
        secretEnc: box.seal('whsec_source-secret', secretBinding(a.siteId, 'endpoint-1')),
        ownerKeyId: null,
        createdBy: null,
        createdAt: new Date(),
        updatedAt: new Date(),
        pausedAt: null,
      });
    await db(a)
      .collection('sessions')
      .insertOne({ _id: 'session-digest' as never, siteId: a.siteId, userId: 'u', createdAt: new Date(), expiresAt: new Date(Date.now() + 3_600_000) });
  }, 120_000);
  afterAll(async () => {
    await bw?.world.close();
  });

  const db = (s: { dbName: string }) => bw.world.services.mongo.db(s.dbName);
  const backupOf = async (s: Seeded) => {
    const started = await bw.call('POST', `/tenants/${s.workspaceId}/backups`);
    expect(started.statusCode, started.body).toBe(202);
    return waitForState(bw.call, `/tenants/${s.workspaceId}/backups/${started.json().backup.id}`, 'backup', ['succeeded', 'failed', 'cancelled']);
  };
  const cloneRequest = (host: string, from: Record<string, string>) => ({ name: `Clone ${host}`, domains: [host], admin: newAdmin, ...from });

  it('from a backup: every document and media byte equal but the fix-ups; new site id and domains; no secret of the source accepted; endpoints paused', async () => {
    const backup = await backupOf(a);
    expect(backup.state, backup.error).toBe('succeeded');
    const before = await dumpDatabase(db(a));
    const mediaBefore = await mediaDigests(db(a));

    const res = await bw.call('POST', '/tenants', cloneRequest('clone-b.example.test', { fromBackup: backup.id }));
    expect(res.statusCode, res.body).toBe(202);
    const { tenant, site } = res.json();
    expect(['provisioning', 'active']).toContain(tenant.status);
    expect(site.id).not.toBe(a.siteId);
    expect(site.domains).toEqual(['clone-b.example.test']);
    const row = await waitForWorkspace(bw.world, tenant.id, (w) => w.status !== 'provisioning', 120_000);
    expect(row.status, row.clone?.error).toBe('active');
    expect(row.clone).toBeUndefined();
    await checkHistory(bw.world.services.temporal.client.workflow.getHandle(cloneWorkflowId(tenant.id)), 'clone');

    // Every byte equal but the fix-ups; the source untouched.
    const clone = await dumpDatabase(db(row));
    expect(withoutFixed(clone)).toEqual(asCloned(before, a.siteId, site.id));
    expect(await dumpDatabase(db(a))).toEqual(before);
    expect(await mediaDigests(db(row))).toEqual(mediaBefore);
    for (const name of CLONE_LEFT_BEHIND) expect(await bw.world.services.workspaceDb(row).collection(name).countDocuments({}), name).toBe(0);
    // Each feature names its own (Feature.clone.leftBehind): credentials, meters and traffic of the source.
    expect([...CLONE_LEFT_BEHIND].sort()).toEqual(
      [
        'api_keys',
        'invitations',
        'oauth_clients',
        'oauth_grants',
        'oauth_secrets',
        'password_resets',
        // Collections of an archive made before site_state: the platform feature leaves their documents behind.
        'quota_counters',
        'quota_locks',
        'rate_counters',
        'sessions',
        'webhook_attempt_batches',
        'webhook_attempts',
        'webhook_deliveries',
      ].sort(),
    );

    // Accounts come without their secrets; the request's administrator is the only way in.
    const sourceUsers = await db(a).collection('users').find({}).toArray();
    const cloneUsers = await db(row).collection('users').find({}).toArray();
    for (const user of sourceUsers) {
      const copied = cloneUsers.find((u) => u._id === user._id)!;
      expect(copied.siteId).toBe(site.id);
      expect(copied.passwordHash).toBe(CLONED_PASSWORD);
      expect(copied.platformOperator).toBe(false);
      expect(copied.totp).toBeUndefined();
    }
    const admin = cloneUsers.find((u) => u.email === newAdmin.email)!;
    expect(admin.role).toBe('administrator');
    expect(await verifyPassword(newAdmin.password, admin.passwordHash)).toBe(true);
    expect(await verifyPassword('correct horse battery staple', CLONED_PASSWORD)).toBe(false);

    // The source's key is refused on the clone; it still works on the source.
    const onClone = await bw.world.app.inject({ url: '/api/manage/v1/content', headers: { authorization: `Bearer ${a.key}`, host: 'clone-b.example.test' } });
    expect(onClone.statusCode).toBe(401);
    expect(onClone.json()).toEqual({ error: 'Unauthorized' });
    expect((await a.manage('GET', '/content')).statusCode).toBe(200);

    // The endpoint: paused, a new secret sealed to the new site (the source's does not open there).
    const endpoint = (await bw.world.services
      .workspaceDb(row)
      .collection('webhook_endpoints')
      .findOne({ _id: 'endpoint-1' as never }))!;
    const box = createWebhookSecretBox(bw.world.config.SECRET_KEY);
    expect(endpoint.pausedAt).toBeInstanceOf(Date);
    expect(endpoint.siteId).toBe(site.id);
    expect(box.open(endpoint.secretEnc, secretBinding(site.id, 'endpoint-1'))).toMatch(/^whsec_/);
    expect(box.open(endpoint.secretEnc, secretBinding(site.id, 'endpoint-1'))).not.toBe('whsec_source-secret');

    // Platform rows: the new site holds the request's domain only; the source keeps its own.
    const { sites, domains } = platformCollections(bw.world.services);
    expect(await sites.findOne({ _id: site.id })).toMatchObject({ workspaceId: tenant.id, domains: ['clone-b.example.test'] });
    expect(await domains.findOne({ _id: a.host })).toMatchObject({ workspaceId: a.workspaceId });
    const served = await bw.world.app.inject({ url: '/api/manage/v1/content', headers: { host: 'clone-b.example.test' } });
    expect(served.statusCode).toBe(401);
  }, 300_000);

  it('from a living workspace while writes run: a consistent copy through a fresh backup, removed afterwards', async () => {
    let writing = true;
    const answers: number[] = [];
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const res = await a.manage('POST', '/content', { title: `Written during the clone ${i}` });
        answers.push(res.statusCode);
        if (res.statusCode === 423) await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const res = await bw.call('POST', '/tenants', cloneRequest('clone-c.example.test', { fromWorkspace: a.workspaceId }));
    expect(res.statusCode, res.body).toBe(202);
    const { tenant, site } = res.json();
    const row = await waitForWorkspace(bw.world, tenant.id, (w) => w.status !== 'provisioning', 180_000);
    writing = false;
    await writer;
    expect(row.status, row.clone?.error).toBe('active');
    await checkHistory(bw.world.services.temporal.client.workflow.getHandle(cloneWorkflowId(tenant.id)), 'clone-from-workspace');
    expect(answers.filter((s) => s !== 201 && s !== 423)).toEqual([]);
    expect(answers).toContain(201);

    // Each cloned entry is the source's as it is (entries are only added), and every entry the source had before the clone is there.
    const sourceEntries = new Map((await db(a).collection('content_entries').find({}).toArray()).map((e) => [String(e._id), e]));
    const cloned = await db(row).collection('content_entries').find({}).toArray();
    expect(cloned.length).toBeGreaterThanOrEqual(12);
    for (const entry of cloned) {
      const original = sourceEntries.get(String(entry._id))!;
      expect(BSON.EJSON.stringify(entry, { relaxed: false })).toBe(BSON.EJSON.stringify(original, { relaxed: false }).split(a.siteId).join(site.id));
    }
    // The backup taken for the clone is gone; the source's writes answer again.
    expect(await backupCollections(bw.world.services).backups.countDocuments({ workspaceId: a.workspaceId, trigger: 'clone' })).toBe(0);
    expect((await workspaceRow(bw.world, a.workspaceId))?.writeHold ?? null).toBeNull();
    expect((await a.manage('POST', '/content', { title: 'After the clone' })).statusCode).toBe(201);
  }, 300_000);

  it('refuses a tampered archive, an unknown backup, two sources or a taken domain, and leaves nothing', async () => {
    const backup = await backupOf(a);
    expect(backup.state).toBe('succeeded');
    const { workspaces, domains } = platformCollections(bw.world.services);
    const rowsBefore = await workspaces.countDocuments({});
    // Databases of this world only: other test files share the engine.
    const ours = async () => (await databaseNames(bw.world)).filter((name) => name.startsWith(bw.world.config.DB_PREFIX)).sort();
    const databasesBefore = await ours();

    const unknown = await bw.call('POST', '/tenants', cloneRequest('clone-x.example.test', { fromBackup: 'no-such-backup' }));
    expect(unknown.statusCode).toBe(404);
    const both = await bw.call('POST', '/tenants', cloneRequest('clone-x.example.test', { fromBackup: backup.id, fromWorkspace: a.workspaceId }));
    expect(both.statusCode).toBe(400);
    const taken = await bw.call('POST', '/tenants', cloneRequest(a.host, { fromBackup: backup.id }));
    expect(taken.statusCode).toBe(409);
    expect(taken.json().error).toMatch(/Domain already in use/);
    const self = await bw.call('POST', '/tenants', cloneRequest('clone-x.example.test', { fromWorkspace: bw.world.defaultWorkspace.id }));
    expect(self.statusCode).toBe(409);

    const folder = join(bw.backupDir, a.workspaceId, backup.id, 'collections');
    appendFileSync(
      join(
        folder,
        readdirSync(folder).find((f) => f.startsWith('content_entries'))!,
      ),
      '{"_id":"smuggled"}\n',
    );
    const tampered = await bw.call('POST', '/tenants', cloneRequest('clone-x.example.test', { fromBackup: backup.id }));
    expect(tampered.statusCode).toBe(409);
    expect(tampered.json().error).toMatch(/corrupted: collections\/content_entries\.ndjson/);

    expect(await workspaces.countDocuments({})).toBe(rowsBefore);
    expect(await domains.findOne({ _id: 'clone-x.example.test' })).toBeNull();
    expect(await ours()).toEqual(databasesBefore);
    expect((await domains.findOne({ _id: a.host }))?.workspaceId).toBe(a.workspaceId);
  }, 180_000);
});
