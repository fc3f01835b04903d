import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { platformCollections } from '../../services/tenancy/platform-db.ts';
import { requestWorkspace } from '../../services/platform/provisioning.ts';
import { beginWorkspaceDeletion } from '../../services/platform/deletion.ts';
import { reconcileWorkspaces } from '../../services/platform/lifecycle-reconciler.ts';
import { workspaceIndexVersion } from '../../services/tenancy/index-version.ts';
import { createSiteResolver } from '../../services/tenancy/site-resolver.ts';
import { scheduleWorkflowId } from '../../services/content/schedule.ts';
import { eventCollections } from '../../services/events/model.ts';
import { databaseNames, newAdmin, operatorCaller, waitForWorkspace, workspaceRow } from './support.ts';

describe('workspace lifecycle through the workspace actor', () => {
  let world: World;
  let call: Awaited<ReturnType<typeof operatorCaller>>;
  const on = (host: string, url: string, extra: Record<string, string> = {}, method = 'GET', payload?: unknown) =>
    world.app.inject({ method: method as never, url, headers: { host, ...extra }, payload: payload as never });

  beforeAll(async () => {
    // The routes wait for the end state (a busy machine's worker may need more than the default 5 s).
    world = await startWorld({ worker: true, env: { LIFECYCLE_WAIT_MS: '60000' } });
    call = await operatorCaller(world);
  });
  afterAll(() => world?.close());

  it('provisions through the actor: database, indexes, site, domains and administrator; nothing secret kept', async () => {
    const created = await call('POST', '/tenants', { name: 'Round', domains: ['round.example.test', 'www.round.example.test'], admin: newAdmin });
    expect(created.statusCode).toBe(202);
    const { tenant, site } = created.json();
    expect(tenant.status).toBe('active');
    const row = await workspaceRow(world, tenant.id);
    expect(row?.provisioning).toBeUndefined();
    expect(row?.indexVersion).toBe(workspaceIndexVersion(world.services.features));
    const domains = await platformCollections(world.services).domains.find({ workspaceId: tenant.id }).toArray();
    expect(domains.map((d) => [d._id, d.siteId]).sort()).toEqual([
      ['round.example.test', site.id],
      ['www.round.example.test', site.id],
    ]);
    const indexes = await world.services.mongo.db(row!.dbName).collection('users').indexes();
    expect(indexes.some((index) => index.unique && 'email' in index.key)).toBe(true);
    const login = await on('round.example.test', '/api/auth/login', { origin: 'http://round.example.test' }, 'POST', newAdmin);
    expect(login.statusCode).toBe(200);
  });

  it('claims domains all or none: one taken host is a 409 and nothing of the request stays', async () => {
    const before = await platformCollections(world.services).workspaces.countDocuments();
    const clash = await call('POST', '/tenants', { name: 'Clash', domains: ['fresh.example.test', 'round.example.test'], admin: newAdmin });
    expect(clash.statusCode).toBe(409);
    expect(clash.json()).toEqual({ error: 'Domain already in use: round.example.test' });
    expect(await platformCollections(world.services).domains.findOne({ _id: 'fresh.example.test' })).toBeNull();
    expect(await platformCollections(world.services).workspaces.countDocuments()).toBe(before);

    // A second site of a workspace claims the same way.
    const { domains, sites } = platformCollections(world.services);
    const round = (await domains.findOne({ _id: 'round.example.test' }))!;
    const sitesBefore = await sites.countDocuments({ workspaceId: round.workspaceId });
    const site = await call('POST', `/tenants/${round.workspaceId}/sites`, {
      name: 'Clash',
      domains: ['fresh.example.test', 'www.round.example.test'],
      admin: newAdmin,
    });
    expect(site.statusCode).toBe(409);
    expect(site.json()).toEqual({ error: 'Domain already in use: www.round.example.test' });
    expect(await domains.findOne({ _id: 'fresh.example.test' })).toBeNull();
    expect(await sites.countDocuments({ workspaceId: round.workspaceId })).toBe(sitesBefore);
  });

  it('suspend / reactivate round trip: public 404, every other surface 423, then all as it was', async () => {
    const { tenant } = (await call('POST', '/tenants', { name: 'Nap', domains: ['nap.example.test'], admin: newAdmin })).json();
    const host = 'nap.example.test';
    const origin = `http://${host}`;
    const login = await on(host, '/api/auth/login', { origin }, 'POST', newAdmin);
    const cookie = String(login.headers['set-cookie']).split(';')[0];
    const me = () => on(host, '/api/auth/me', { cookie });
    expect((await me()).statusCode).toBe(200);
    expect((await on(host, '/api/v1/openapi.json')).statusCode).toBe(200);

    const suspended = await call('POST', `/tenants/${tenant.id}/suspend`);
    expect(suspended.statusCode).toBe(202);
    expect(suspended.json().tenant.status).toBe('suspended');
    for (const url of ['/api/v1/openapi.json', '/api/v1/entries', '/api/v1/graphql', '/media/files/any']) {
      const answer = await on(host, url);
      expect(answer.statusCode, `${url} ${answer.body}`).toBe(404);
      expect(answer.json(), url).toEqual({ error: 'Unknown site' });
    }
    for (const [url, method] of [
      ['/api/auth/me', 'GET'],
      ['/api/manage/v1/health', 'GET'],
      ['/api/mcp', 'POST'],
      ['/admin', 'GET'],
      ['/.well-known/oauth-authorization-server', 'GET'],
    ]) {
      const answer = await on(host, url, { cookie }, method, method === 'POST' ? {} : undefined);
      expect(answer.statusCode, url).toBe(423);
      expect(answer.json(), url).toEqual({ error: 'Workspace suspended' });
    }
    // The operator's own workspace is untouched.
    expect((await call('GET', `/tenants/${tenant.id}`)).json().tenant.status).toBe('suspended');

    const reactivated = await call('POST', `/tenants/${tenant.id}/reactivate`);
    expect(reactivated.statusCode).toBe(202);
    expect(reactivated.json().tenant.status).toBe('active');
    expect((await me()).statusCode).toBe(200);
    expect((await on(host, '/api/v1/openapi.json')).statusCode).toBe(200);
    const again = await call('POST', `/tenants/${tenant.id}/reactivate`);
    expect([again.statusCode, again.json().tenant.status]).toEqual([202, 'active']);
  });

  it('drops only the host answers a change affects, and the next request still sees the change', async () => {
    const sites = world.services.sites;
    const stay = (await call('POST', '/tenants', { name: 'Stay', domains: ['stay.example.test'], admin: newAdmin })).json();
    const other = (await call('POST', '/tenants', { name: 'Other', domains: ['other.example.test'], admin: newAdmin })).json();
    // A host nobody holds yet: its "unknown" answer is cached too.
    expect(await sites.resolve('later.example.test')).toBeNull();
    expect(sites.peek('later.example.test')).toBeNull();
    expect((await sites.resolve('stay.example.test'))?.workspace._id).toBe(stay.tenant.id);
    await sites.resolve('other.example.test');

    // Another workspace's suspension and quotas, and a new workspace, leave this host's answer held.
    expect((await call('POST', `/tenants/${other.tenant.id}/suspend`)).statusCode).toBe(202);
    expect((await call('PUT', `/sites/${other.site.id}/quotas`, { quotas: { entries: 10 } })).statusCode).toBe(200);
    const later = (await call('POST', '/tenants', { name: 'Later', domains: ['later.example.test'], admin: newAdmin })).json();
    expect(sites.peek('stay.example.test')?.workspace._id).toBe(stay.tenant.id);
    // ...while each affected answer was dropped and reads the new state.
    expect(sites.peek('other.example.test')).toBeUndefined();
    expect((await sites.resolve('other.example.test'))?.workspace.status).toBe('suspended');
    expect((await sites.resolve('later.example.test'))?.workspace._id).toBe(later.tenant.id);
    expect((await on('later.example.test', '/api/v1/openapi.json')).statusCode).toBe(200);

    // Its own changes drop it: a site quota, then a suspension (the next request answers 404).
    expect((await call('PUT', `/sites/${stay.site.id}/quotas`, { quotas: { entries: 5 } })).statusCode).toBe(200);
    expect(sites.peek('stay.example.test')).toBeUndefined();
    expect((await sites.resolve('stay.example.test'))?.site.quotas).toEqual({ entries: 5 });
    expect((await call('POST', `/tenants/${stay.tenant.id}/suspend`)).statusCode).toBe(202);
    expect(sites.peek('stay.example.test')).toBeUndefined();
    expect((await on('stay.example.test', '/api/v1/openapi.json')).statusCode).toBe(404);
  });

  it('deletes without dropping the database (data kept, domains freed, work cancelled), then drops it when asked', async () => {
    const { tenant, site } = (await call('POST', '/tenants', { name: 'Keep', domains: ['keep.example.test'], admin: newAdmin })).json();
    const row = (await workspaceRow(world, tenant.id))!;
    const db = world.services.mongo.db(row.dbName);
    // A scheduled entry with its running schedule workflow, and a pending webhook delivery.
    const entryId = 'entry-scheduled';
    await db
      .collection('content_entries')
      .insertOne({ _id: entryId as never, siteId: site.id, schedule: { publishOn: new Date('2099-01-01'), unpublishOn: null, token: 't' } });
    const schedule = await world.services.temporal.client.workflow.start('scheduleEntryWorkflow', {
      taskQueue: world.services.temporal.taskQueue,
      workflowId: scheduleWorkflowId(tenant.id, entryId),
      args: [{ workspaceId: tenant.id, siteId: site.id, entryId, token: 't', publishOn: '2099-01-01T00:00:00.000Z', unpublishOn: null }],
    });
    await eventCollections(db).deliveries.insertOne({
      _id: 'delivery-pending',
      siteId: site.id,
      endpointId: 'e',
      event: 'entry.published',
      body: '{}',
      status: 'pending',
      attempts: 0,
      responseCode: null,
      error: null,
      redeliveryOf: null,
      createdAt: new Date(),
      updatedAt: new Date(),
      finishedAt: null,
    });

    const deleted = await call('DELETE', `/tenants/${tenant.id}`);
    expect(deleted.statusCode).toBe(202);
    expect(deleted.json().tenant).toEqual(expect.objectContaining({ status: 'deleted' }));
    expect(deleted.json().tenant.databaseDropped).toBeUndefined();
    expect(await databaseNames(world)).toContain(row.dbName);
    expect(await db.collection('users').countDocuments({ siteId: site.id })).toBe(1);
    expect(await platformCollections(world.services).domains.countDocuments({ workspaceId: tenant.id })).toBe(0);
    expect((await schedule.describe()).status.name).toBe('TERMINATED');
    expect((await eventCollections(db).deliveries.findOne({ _id: 'delivery-pending' }))?.status).toBe('failed');
    expect((await on('keep.example.test', '/api/v1/openapi.json')).statusCode).toBe(404);

    const dropped = await call('DELETE', `/tenants/${tenant.id}?dropDatabase=true`);
    expect(dropped.statusCode).toBe(202);
    expect(dropped.json().tenant).toMatchObject({ status: 'deleted', databaseDropped: true });
    expect(await databaseNames(world)).not.toContain(row.dbName);
    // Harmless when repeated.
    expect((await call('DELETE', `/tenants/${tenant.id}?dropDatabase=true`)).json().tenant).toMatchObject({ status: 'deleted', databaseDropped: true });
    expect((await call('POST', `/tenants/${tenant.id}/suspend`)).statusCode).toBe(409);
  });

  it('resumes a step whose gateway died before signalling the actor (the worker reconciler)', async () => {
    // What a gateway killed right after writing the row leaves: `provisioning`, domains claimed, no actor.
    const orphan = await requestWorkspace(world.services, { name: 'Orphan', domains: ['orphan.example.test'], admin: newAdmin });
    expect((await workspaceRow(world, orphan._id))?.status).toBe('provisioning');
    const { resumed } = await reconcileWorkspaces(world.services, { graceMs: 0 });
    expect(resumed).toBeGreaterThanOrEqual(1);
    await waitForWorkspace(world, orphan._id, (w) => w.status === 'active');
    expect((await on('orphan.example.test', '/api/v1/openapi.json')).statusCode).toBe(200);

    await beginWorkspaceDeletion(world.services, orphan._id, true);
    await reconcileWorkspaces(world.services, { graceMs: 0 });
    // The purge the operator confirmed is the deletion's last step, after `deleted`.
    const gone = await waitForWorkspace(world, orphan._id, (w) => w.status === 'deleted' && Boolean(w.purgedAt));
    expect(gone.databaseDropped).toBe(true);
    expect(await databaseNames(world)).not.toContain(gone.dbName);
  });

  it('brings an old index version up to date through the actor, not at gateway start', async () => {
    const { tenant } = (await call('POST', '/tenants', { name: 'Old', domains: ['old.example.test'], admin: newAdmin })).json();
    const { workspaces } = platformCollections(world.services);
    // What an earlier release left: an index no feature declares any more, and one it lost.
    const db = world.services.mongo.db((await workspaces.findOne({ _id: tenant.id }))!.dbName);
    await db.collection('users').createIndex({ siteId: 1, retired: 1 });
    await db.collection('users').dropIndex('siteId_1_email_1');
    await workspaces.updateOne({ _id: tenant.id }, { $set: { indexVersion: 'previous-release' } });
    const { indexes } = await reconcileWorkspaces(world.services, { graceMs: 0 });
    expect(indexes).toBeGreaterThanOrEqual(1);
    await waitForWorkspace(world, tenant.id, (w) => w.indexVersion === workspaceIndexVersion(world.services.features));
    const names = (await db.collection('users').indexes()).map((index) => index.name).sort();
    expect(names).toEqual(['_id_', 'siteId_1_email_1']);
    // A collection no write made yet stays unmade: its first write makes it with its indexes (core/first-write.ts).
    expect((await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name)).not.toContain('content_entries');
  });

  it('keeps the Host → site cache bounded, the least recently used host evicted first', async () => {
    const resolver = createSiteResolver(world.services, 100);
    await resolver.resolve('round.example.test');
    for (let i = 0; i < 300; i += 1) {
      await resolver.resolve(`unknown-${i}.example.test`);
      if (i % 50 === 0) await resolver.resolve('round.example.test');
    }
    expect(resolver.size()).toBe(100);
    expect(resolver.peek('round.example.test')?.site.domains).toContain('round.example.test');
    expect(resolver.peek('unknown-0.example.test')).toBeUndefined();
  });
});

describe('lifecycle routes without a worker', () => {
  let world: World;
  let call: Awaited<ReturnType<typeof operatorCaller>>;
  beforeAll(async () => {
    world = await startWorld({ env: { LIFECYCLE_WAIT_MS: '300' } });
    call = await operatorCaller(world);
  });
  afterAll(async () => {
    // The actors started here wait for a worker that never comes.
    for await (const info of world.services.temporal.client.workflow.list({
      query: `TaskQueue = '${world.config.TEMPORAL_TASK_QUEUE}' AND ExecutionStatus = 'Running'`,
    })) {
      await world.services.temporal.client.workflow
        .getHandle(info.workflowId)
        .terminate('test over')
        .catch(() => undefined);
    }
    await world?.close();
  });

  it('answers 202 with `provisioning` / `deleting` at once, and a repeated call is harmless', async () => {
    const started = Date.now();
    const created = await call('POST', '/tenants', { name: 'Later', domains: ['later.example.test'], admin: newAdmin });
    expect(created.statusCode).toBe(202);
    expect(created.json().tenant.status).toBe('provisioning');
    const id = created.json().tenant.id;
    expect((await call('GET', `/tenants/${id}`)).json().tenant.status).toBe('provisioning');
    expect((await world.app.inject({ url: '/api/v1/openapi.json', headers: { host: 'later.example.test' } })).statusCode).toBe(404);
    expect((await call('POST', `/tenants/${id}/suspend`)).statusCode).toBe(409);

    for (let i = 0; i < 2; i += 1) {
      const deleted = await call('DELETE', `/tenants/${id}`);
      expect(deleted.statusCode).toBe(202);
      expect(deleted.json().tenant.status).toBe('deleting');
    }
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});
