// Records one run of the workflows whose histories come from here into test/replay/histories/
// (the plugin, export and schedule histories are recorded by their own tests with
// RECORD_HISTORIES=1, see test/support/histories.ts). Run after a deliberate change to a
// workflow's shape, engines running, naming the recordings to make (all when none is named):
//   MONGODB_URI=mongodb://127.0.0.1:27117 TEMPORAL_ADDRESS=127.0.0.1:7233 npx tsx test/replay/record.ts [probe] [workspace] [workspace-purge]
// (workspace.json: the workspace actor, commands awaited through its update; the older
// workspace-signals-only.json, recorded before the actor had the update, stays to prove old runs replay)
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { World } from '../support/world.ts';
import { probeWorkflowId, probeWorkflowType } from '../../workflows/contracts/probe.ts';
import type { probeWorkflow } from '../../workflows/probe.ts';
import { workspaceWorkflowId, type WorkspaceCommand } from '../../workflows/contracts/workspace.ts';
import { beginWorkspaceDeletion } from '../../services/platform/deletion.ts';
import { requestWorkspace } from '../../services/platform/provisioning.ts';
import { awaitWorkspaceCommand, sendWorkspaceCommand } from '../../services/platform/workspace-actor.ts';
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

/**
 * The actor through a deletion's grace period, in two runs: `workspace-undelete.json` (delete with a
 * grace of 1 minute: the actor waits on its timer; undelete wakes it and it ends), then
 * `workspace-purge.json` (delete again, grace 8 s and a final backup: the timer fires, the final
 * backup runs as a child, the purge drops the database and the run ends).
 */
async function recordWorkspacePurge(world: World) {
  const { services } = world;
  const workspace = await requestWorkspace(services, {
    name: 'Recorded purge',
    domains: ['recorded-purge.example.test'],
    admin: { email: 'owner@recorded-purge.example.test', password: 'correct horse battery staple' },
  });
  const run = async (command: WorkspaceCommand) => awaitWorkspaceCommand(services, workspace._id, await sendWorkspaceCommand(services, workspace._id, command));
  await run({ kind: 'provision' });
  await beginWorkspaceDeletion(services, workspace._id, false, { graceMs: 60_000 });
  await run({ kind: 'delete', dropDatabase: false });
  await run({ kind: 'undelete' });
  // That run ends with the undelete (no purge pending): the deletion's timer cancelled by the command.
  const actor = services.temporal.client.workflow.getHandle(workspaceWorkflowId(workspace._id));
  await save(services.temporal.client.workflow.getHandle(actor.workflowId, (await actor.describe()).runId), 'workspace-undelete');
  await beginWorkspaceDeletion(services, workspace._id, false, { graceMs: 8000, finalBackup: true });
  await run({ kind: 'delete', dropDatabase: false });
  await save(services.temporal.client.workflow.getHandle(workspaceWorkflowId(workspace._id)), 'workspace-purge');
}

const recordings: Record<string, (world: World) => Promise<void>> = {
  probe: recordProbe,
  workspace: recordWorkspaceActor,
  'workspace-purge': recordWorkspacePurge,
};
const named = process.argv.slice(2);
const unknown = named.filter((name) => !(name in recordings));
if (unknown.length > 0) throw new Error(`no recording named ${unknown.join(', ')} (known: ${Object.keys(recordings).join(', ')})`);

// The final backup of the purge recording writes into a folder of its own.
const world = await startWebhookWorld({ worker: true, env: { LIFECYCLE_WAIT_MS: '60000', BACKUP_DIR: mkdtempSync(join(tmpdir(), 'cwb-record-')) } });
try {
  for (const [name, record] of Object.entries(recordings)) {
    if (named.length === 0 || named.includes(name)) await record(world);
  }
} finally {
  await world.close();
}
