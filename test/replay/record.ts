// Records the history of one run of each workflow into test/replay/histories/, for the replay test.
// Run after a deliberate change to a workflow's shape: `npx tsx test/replay/record.ts [probe|workspace]`.
import { writeFileSync } from 'node:fs';
import { startWorld } from '../support/world.ts';
import { probeWorkflow } from '../../workflows/probe.ts';
import { workspaceWorkflowId } from '../../workflows/contracts/workspace.ts';
import { requestWorkspace } from '../../services/platform/provisioning.ts';
import { sendWorkspaceCommand } from '../../services/platform/workspace-actor.ts';

const only = process.argv[2];
const world = await startWorld({ worker: true });
const save = (name: string, history: unknown) => {
  writeFileSync(new URL(`./histories/${name}`, import.meta.url), JSON.stringify(history, null, 1));
  console.log(`recorded ${name}`);
};
try {
  if (!only || only === 'probe') {
    const handle = await world.services.temporal.client.workflow.start(probeWorkflow, {
      taskQueue: world.services.temporal.taskQueue,
      workflowId: `probe:record-${world.config.DB_PREFIX}`,
      args: ['recorded-probe'],
    });
    await handle.result();
    save('probe.json', await handle.fetchHistory());
  }
  if (!only || only === 'workspace') {
    // One actor run through every command: provision, suspend, reactivate, indexes, delete with drop.
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
    const handle = services.temporal.client.workflow.getHandle(workspaceWorkflowId(workspace._id));
    await handle.result();
    save('workspace.json', await handle.fetchHistory());
  }
} finally {
  await world.close();
}
