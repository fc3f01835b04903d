import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommandStartedEvent, MongoClient } from 'mongodb';
import proto from '@temporalio/proto';
import type { Services } from '../../services/core/context.ts';
import type { Feature } from '../../services/core/feature.ts';
import { closeServices } from '../../services/core/services.ts';
import { features } from '../../services/features.ts';
import { createRuntime } from '../../services/runtime.ts';
import { createWorker } from '../../services/worker-factory.ts';
import { openRetiredRuns } from '../../services/retired-workflows.ts';
import { workspaceIndexVersion } from '../../services/tenancy/index-version.ts';
import { requestWorkspace } from '../../services/platform/provisioning.ts';
import { awaitWorkspaceCommand, sendWorkspaceCommand } from '../../services/platform/workspace-actor.ts';
import { platformCollections } from '../../services/tenancy/platform-db.ts';
import { workspaceWorkflowId } from '../../workflows/contracts/workspace.ts';
import { startWorld, type World } from '../support/world.ts';
import { eventually } from '../support/polling.ts';
import { newAdmin, operatorCaller, waitForWorkspace, workspaceRow } from './support.ts';

// The routes wait on the workspace actor itself (its `workspaceCommandDone` update), not on the
// platform database, and a provisioning claims its domains once. The worker runs in this process
// on services of its own (its own MongoDB client), so each side's commands are told apart.

const STEP_MS = 1500;
/** A site provisioning step that takes a while: a route polling the database would read it many times. */
const slowSiteFeature: Feature = {
  name: 'slow-site-provisioning',
  operations: [],
  async provisionSite() {
    await new Promise((done) => setTimeout(done, STEP_MS));
  },
};
const featureList = [...features, slowSiteFeature];

interface Command {
  name: string;
  collection: string;
  command: Record<string, any>;
}

function recordCommands(mongo: MongoClient, database: string) {
  const seen: Command[] = [];
  mongo.on('commandStarted', (event: CommandStartedEvent) => {
    if (event.databaseName !== database) return;
    seen.push({ name: event.commandName, collection: String(event.command[event.commandName]), command: event.command });
  });
  return {
    clear: () => void seen.splice(0),
    of: (name: string, collection: string) => seen.filter((c) => c.name === name && c.collection === collection),
  };
}

describe('lifecycle routes wait on the workspace actor', () => {
  let world: World;
  let workerServices: Services;
  let worker: { close(): Promise<void> };
  let call: Awaited<ReturnType<typeof operatorCaller>>;
  let gateway: ReturnType<typeof recordCommands>;
  let workerSide: ReturnType<typeof recordCommands>;

  beforeAll(async () => {
    world = await startWorld({ features: featureList, monitorCommands: true, env: { LIFECYCLE_WAIT_MS: '60000' } });
    call = await operatorCaller(world);
    ({ services: workerServices } = await createRuntime(world.config, { features: featureList, monitorCommands: true }));
    const created = await createWorker(workerServices, { workflowBundle: { codePath: resolve(process.env.TEST_WORKFLOW_BUNDLE!) } });
    const run = created.worker.run();
    worker = {
      async close() {
        await created.recovery.stop();
        created.worker.shutdown();
        await run.catch(() => undefined);
        await created.connection.close();
        await closeServices(workerServices);
      },
    };
    const platformDb = world.services.platformDb.databaseName;
    gateway = recordCommands(world.services.mongo, platformDb);
    workerSide = recordCommands(workerServices.mongo, platformDb);
  });
  afterAll(async () => {
    await worker?.close();
    await world?.close();
  });

  it('bootstrapped the default workspace through the same request and steps', async () => {
    const row = await workspaceRow(world, world.defaultWorkspace.id);
    expect(row).toMatchObject({ status: 'active', indexVersion: workspaceIndexVersion(world.services.features) });
    expect(row?.provisioning).toBeUndefined();
  });

  it('answers POST /tenants when the actor says the step ran: one read of the row, domains claimed once', async () => {
    gateway.clear();
    workerSide.clear();
    const started = Date.now();
    const created = await call('POST', '/tenants', { name: 'Waited', domains: ['waited.example.test', 'www.waited.example.test'], admin: newAdmin });
    expect(created.statusCode).toBe(202);
    expect(Date.now() - started).toBeGreaterThanOrEqual(STEP_MS);
    const { tenant, site } = created.json();
    expect(tenant.status).toBe('active');

    // The gateway read the new row once, after the actor answered; a poll would have read it every
    // 20–200 ms through the slow step.
    const reads = gateway.of('find', 'workspaces').filter((c) => c.command.filter?._id === tenant.id);
    expect(reads).toHaveLength(1);
    // One claim: one insert of both hosts, by the request; the actor's step only checks them.
    const claims = gateway.of('insert', 'domains');
    expect(claims).toHaveLength(1);
    expect(claims[0].command.documents.map((d: { _id: string }) => d._id).sort()).toEqual(['waited.example.test', 'www.waited.example.test']);
    expect(workerSide.of('insert', 'domains')).toHaveLength(0);
    expect([...gateway.of('delete', 'domains'), ...workerSide.of('delete', 'domains')]).toHaveLength(0);
    expect(await platformCollections(world.services).domains.countDocuments({ siteId: site.id })).toBe(2);

    // The route's wait is in the actor's history: an update accepted and completed.
    const history = await world.services.temporal.client.workflow.getHandle(workspaceWorkflowId(tenant.id)).fetchHistory();
    const { EventType } = proto.temporal.api.enums.v1;
    const types = history.events!.map((event) => event.eventType);
    expect(types).toContain(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED);
    expect(types).toContain(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED);
  });

  it('answers with the state so far when the step takes longer than LIFECYCLE_WAIT_MS, and the step still finishes', async () => {
    const impatient = { ...world.services, config: { ...world.services.config, LIFECYCLE_WAIT_MS: 200 } };
    const requested = await requestWorkspace(world.services, { name: 'Impatient', domains: ['impatient.example.test'], admin: newAdmin });
    const command = await sendWorkspaceCommand(world.services, requested._id, { kind: 'provision' });
    expect(command).toBeTruthy();
    const started = Date.now();
    const row = await awaitWorkspaceCommand(impatient, requested._id, command);
    expect(Date.now() - started).toBeLessThan(STEP_MS);
    expect(row?.status).toBe('provisioning');
    await waitForWorkspace(world, requested._id, (w) => w.status === 'active');
  });
});

describe('the drain condition of retired workflows', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(() => world?.close());

  it('finds an open run of the retired deleteWorkspaceWorkflow through visibility', async () => {
    const tag = randomBytes(4).toString('hex');
    // No worker polls this queue: the run stays open, as one started before the upgrade would.
    const handle = await world.services.temporal.client.workflow.start('deleteWorkspaceWorkflow', {
      taskQueue: `retired-${tag}`,
      workflowId: `workspace-delete:drain-${tag}`,
      args: [{ workspaceId: `drain-${tag}`, dropDatabase: false }],
    });
    try {
      const found = await eventually(
        async () => (await openRetiredRuns(world.services)).find((run) => run.workflowId === handle.workflowId),
        'the open run to be listed',
      );
      expect(found).toMatchObject({ type: 'deleteWorkspaceWorkflow', remedy: expect.stringContaining('DELETE /tenants/{id}') });
    } finally {
      await handle.terminate('test over');
    }
    await eventually(async () => !(await openRetiredRuns(world.services)).some((run) => run.workflowId === handle.workflowId), 'the run to be drained');
  });
});
