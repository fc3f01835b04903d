// Records one run of the workflows whose histories come from here into test/replay/histories/
// (the plugin, export and schedule histories are recorded by their own tests with
// RECORD_HISTORIES=1, see test/support/histories.ts). Run after a deliberate change to a
// workflow's shape, engines running:
//   MONGODB_URI=mongodb://127.0.0.1:27117 TEMPORAL_ADDRESS=127.0.0.1:7233 npx tsx test/replay/record.ts
// (workspace.json: the workspace actor; workspace-delete.json: the superseded deletion workflow)
import { writeFileSync } from 'node:fs';
import type { WorkflowHandle } from '@temporalio/client';
import type { World } from '../support/world.ts';
import { probeWorkflowId, probeWorkflowType } from '../../workflows/contracts/probe.ts';
import type { probeWorkflow } from '../../workflows/probe.ts';
import { deleteWorkspaceWorkflowId, deleteWorkspaceWorkflowType } from '../../workflows/contracts/workspace-lifecycle.ts';
import { workspaceWorkflowId } from '../../workflows/contracts/workspace.ts';
import { createWorkspace } from '../../services/platform/workspaces.ts';
import { requestWorkspace } from '../../services/platform/provisioning.ts';
import { sendWorkspaceCommand } from '../../services/platform/workspace-actor.ts';
import { startWebhookWorld } from '../events/support.ts';

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

/** The superseded deletion workflow (kept registered so old runs finish), started directly. */
async function recordWorkspaceDelete(world: World) {
  const admin = { email: 'gone-admin@example.test', password: 'a-long-enough-password-1' };
  const { workspace } = await createWorkspace(world.services, { name: 'Gone', domains: ['gone.example.test'], admin });
  const handle = await world.services.temporal.client.workflow.start(deleteWorkspaceWorkflowType, {
    taskQueue: world.services.temporal.taskQueue,
    workflowId: deleteWorkspaceWorkflowId(workspace._id),
    args: [{ workspaceId: workspace._id, dropDatabase: true }],
  });
  await save(handle, 'workspace-delete');
}

/** One workspace actor run through every command: provision, suspend, reactivate, indexes, delete. */
async function recordWorkspaceActor(world: World) {
  const { services } = world;
  const workspace = await requestWorkspace(services, {
    name: 'Recorded',
    domains: ['recorded.example.test'],
    admin: { email: 'owner@recorded.example.test', password: 'correct horse battery staple' },
  });
  await sendWorkspaceCommand(services, workspace._id, { kind: 'provision' });
  for (const command of [{ kind: 'suspend' }, { kind: 'reactivate' }, { kind: 'indexes' }, { kind: 'delete', dropDatabase: true }] as const) {
    await sendWorkspaceCommand(services, workspace._id, command);
  }
  await save(services.temporal.client.workflow.getHandle(workspaceWorkflowId(workspace._id)), 'workspace');
}

const world = await startWebhookWorld({ worker: true });
try {
  await recordProbe(world);
  await recordWorkspaceDelete(world);
  await recordWorkspaceActor(world);
} finally {
  await world.close();
}
