import { kill9, spawnWorkerProcess } from '../support/worker-process.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { startWorld, type World } from '../support/world.ts';
import { platformCollections } from '../../services/tenancy/platform-db.ts';
import { databaseNames, newAdmin, operatorCaller, waitForWorkspace, workspaceRow } from './support.ts';
import { eventually } from '../support/polling.ts';

const spawnWorker = (world: World) => spawnWorkerProcess(world.config);

describe('a worker killed with SIGKILL in the middle of a lifecycle step', () => {
  let world: World;
  let call: Awaited<ReturnType<typeof operatorCaller>>;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    // No in-process worker: only the child processes work. The routes answer at once.
    world = await startWorld({ env: { LIFECYCLE_WAIT_MS: '0' } });
    call = await operatorCaller(world);
  });
  afterAll(async () => {
    for (const child of children) await kill9(child);
    await world?.close();
  });

  it('provisioning and deletion each resume on a new worker to the same end state', async () => {
    // The kill must land inside a step. A fresh workspace makes few collections, so provisioning
    // may finish before the kill lands: then again with another workspace.
    let tenant!: { id: string };
    let site!: { id: string };
    let dbName = '';
    let domain = '';
    for (let attempt = 1; ; attempt++) {
      const first = await spawnWorker(world);
      children.push(first);
      domain = `crash-${attempt}.example.test`;
      const created = await call('POST', '/tenants', { name: `Crash ${attempt}`, domains: [domain], admin: newAdmin });
      expect(created.statusCode).toBe(202);
      ({ tenant, site } = created.json());
      dbName = `${world.config.DB_PREFIX}ws_${tenant.id}`;
      // Kill the worker as soon as step 1 (database and indexes) has begun.
      await eventually(async () => (await databaseNames(world)).includes(dbName), 'provisioning to begin', 60_000, 5);
      await kill9(first);
      if ((await workspaceRow(world, tenant.id))?.status === 'provisioning') break;
      expect(attempt, 'provisioning finished before the kill landed, every time').toBeLessThan(5);
    }

    const resumed = await spawnWorker(world);
    children.push(resumed);
    const active = await waitForWorkspace(world, tenant.id, (w) => w.status === 'active', 90_000);
    expect(active.provisioning).toBeUndefined();
    expect(await platformCollections(world.services).sites.countDocuments({ _id: site.id })).toBe(1);
    expect(await platformCollections(world.services).domains.findOne({ _id: domain })).toMatchObject({ siteId: site.id });
    expect(await world.services.mongo.db(dbName).collection('users').countDocuments({ siteId: site.id })).toBe(1);
    const host = { host: domain };
    expect((await world.app.inject({ url: '/api/v1/openapi.json', headers: host })).statusCode).toBe(200);

    const deleted = await call('DELETE', `/tenants/${tenant.id}?dropDatabase=true`);
    expect(deleted.statusCode).toBe(202);
    expect(deleted.json().tenant.status).toBe('deleting');
    await kill9(resumed);
    children.push(await spawnWorker(world));
    // The purge the operator confirmed is the deletion's last step, after `deleted`.
    const gone = await waitForWorkspace(world, tenant.id, (w) => w.status === 'deleted' && Boolean(w.purgedAt), 90_000);
    expect(gone.databaseDropped).toBe(true);
    expect(await databaseNames(world)).not.toContain(dbName);
    expect(await platformCollections(world.services).domains.countDocuments({ workspaceId: tenant.id })).toBe(0);
  }, 300_000);

  it('a worker killed between the deletion and its purge: the actor timer still purges on time, on the next worker', async () => {
    const worker = await spawnWorker(world);
    children.push(worker);
    const { tenant } = (await call('POST', '/tenants', { name: 'Timer', domains: ['timer.example.test'], admin: newAdmin })).json();
    const row = await waitForWorkspace(world, tenant.id, (w) => w.status === 'active', 90_000);
    await world.services.mongo.db(row.dbName).collection('probe').insertOne({ siteId: 'x' });
    expect((await call('DELETE', `/tenants/${tenant.id}?grace=30s`)).statusCode).toBe(202);
    const deleted = await waitForWorkspace(world, tenant.id, (w) => w.status === 'deleted', 90_000);
    const purgeAt = deleted.deletion!.purgeAt!.getTime();
    await kill9(worker);

    const next = await spawnWorker(world);
    children.push(next);
    const ready = Date.now();
    const purged = await waitForWorkspace(world, tenant.id, (w) => Boolean(w.purgedAt), 120_000);
    // Not before its time, and at its time (or as soon as a worker is back, when none was then).
    expect(purged.purgedAt!.getTime()).toBeGreaterThanOrEqual(purgeAt);
    expect(purged.purgedAt!.getTime() - Math.max(purgeAt, ready)).toBeLessThan(30_000);
    expect(await databaseNames(world)).not.toContain(row.dbName);
  }, 300_000);
});
