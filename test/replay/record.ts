// Records one run of the workflows whose histories come from here into test/replay/histories/
// (the plugin, export and schedule histories are recorded by their own tests with
// RECORD_HISTORIES=1, see test/support/histories.ts). Run after a deliberate change to a
// workflow's shape, engines running, naming the recordings to make (all when none is named):
//   MONGODB_URI=mongodb://127.0.0.1:27117 TEMPORAL_ADDRESS=127.0.0.1:7233 npx tsx test/replay/record.ts [probe] [delivery] [workspace]
// (workspace.json: the workspace actor, commands awaited through its update; the older
// workspace-signals-only.json, recorded before the actor had the update, stays to prove old runs replay)
import { writeFileSync } from 'node:fs';
import type { WorkflowHandle } from '@temporalio/client';
import type { World } from '../support/world.ts';
import { probeWorkflowId, probeWorkflowType } from '../../workflows/contracts/probe.ts';
import type { probeWorkflow } from '../../workflows/probe.ts';
import { adminEndpoints } from '../../services/events/endpoint-ops.ts';
import { deliveryWorkflowId } from '../../workflows/contracts/delivery.ts';
import { workspaceWorkflowId } from '../../workflows/contracts/workspace.ts';
import { requestWorkspace } from '../../services/platform/provisioning.ts';
import { awaitWorkspaceCommand, sendWorkspaceCommand } from '../../services/platform/workspace-actor.ts';
import { call, emit, siteDb, startReceiver, startWebhookWorld } from '../events/support.ts';
import { eventually } from '../support/polling.ts';

async function save(handle: WorkflowHandle, name: string) {
  await handle.result();
  const history = await handle.fetchHistory();
  writeFileSync(new URL(`./histories/${name}.json`, import.meta.url), JSON.stringify(history, null, 1));
  console.log(`recorded ${name}.json`);
}

async function recordProbe(world: World) {
  const handle = await world.services.temporal.client.workflow.start<typeof probeWorkflow>(probeWorkflowType, {
    taskQueue: world.services.temporal.taskQueue,
    workflowId: probeWorkflowId(`record-${world.config.DB_PREFIX}`),
    args: ['recorded-probe'],
  });
  await save(handle, 'probe');
}

/** A receiver that fails the first attempt: the history holds a retried activity. */
async function recordDelivery(world: World) {
  const receiver = await startReceiver((_req, index) => ({ status: index === 0 ? 500 : 200 }));
  try {
    await call(world, adminEndpoints.create, { name: 'recorded', url: receiver.url, events: ['content.published'] });
    await emit(world, 'content.published', { id: 'e1', type: 'post', slug: 'recorded', locale: 'en', title: 'Recorded', version: 1 });
    const { deliveries } = await siteDb(world);
    const delivery = await eventually(async () => (await deliveries.findOne({ status: 'delivered' })) ?? undefined, 'delivered', 60_000);
    await save(world.services.temporal.client.workflow.getHandle(deliveryWorkflowId(delivery._id)), 'delivery-retried');
  } finally {
    await receiver.close();
  }
}

/**
 * One workspace actor run through every command: provision, suspend, reactivate, indexes, delete,
 * all queued at once (one run), each awaited through the actor's update as the routes do.
 */
async function recordWorkspaceActor(world: World) {
  const { services } = world;
  const workspace = await requestWorkspace(services, {
    name: 'Recorded',
    domains: ['recorded.example.test'],
    admin: { email: 'owner@recorded.example.test', password: 'correct horse battery staple' },
  });
  const commands = [{ kind: 'provision' }, { kind: 'suspend' }, { kind: 'reactivate' }, { kind: 'indexes' }, { kind: 'delete', dropDatabase: true }] as const;
  const ids: (string | null)[] = [];
  for (const command of commands) ids.push(await sendWorkspaceCommand(services, workspace._id, command));
  await Promise.all(ids.map((id) => awaitWorkspaceCommand(services, workspace._id, id)));
  await save(services.temporal.client.workflow.getHandle(workspaceWorkflowId(workspace._id)), 'workspace');
}

const recordings: Record<string, (world: World) => Promise<void>> = { probe: recordProbe, delivery: recordDelivery, workspace: recordWorkspaceActor };
const named = process.argv.slice(2);
const unknown = named.filter((name) => !(name in recordings));
if (unknown.length > 0) throw new Error(`no recording named ${unknown.join(', ')} (known: ${Object.keys(recordings).join(', ')})`);

const world = await startWebhookWorld({ worker: true, env: { LIFECYCLE_WAIT_MS: '60000' } });
try {
  for (const [name, record] of Object.entries(recordings)) {
    if (named.length === 0 || named.includes(name)) await record(world);
  }
} finally {
  await world.close();
}
