// Records the history of one run of each workflow into test/replay/histories/, for the replay test.
// Run after a deliberate change to a workflow's shape: `npx tsx test/replay/record.ts`.
import { writeFileSync } from 'node:fs';
import { startWorld } from '../support/world.ts';
import { probeWorkflow } from '../../workflows/probe.ts';

const world = await startWorld({ worker: true });
try {
  const handle = await world.services.temporal.client.workflow.start(probeWorkflow, {
    taskQueue: world.services.temporal.taskQueue,
    workflowId: `probe:record-${world.config.DB_PREFIX}`,
    args: ['recorded-probe'],
  });
  await handle.result();
  const history = await handle.fetchHistory();
  writeFileSync(new URL('./histories/probe.json', import.meta.url), JSON.stringify(history, null, 1));
  console.log('recorded probe.json');
} finally {
  await world.close();
}
