import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from '@temporalio/worker';
import type { WorkflowHandle } from '@temporalio/client';
import { workflowsPath } from '../../services/worker-factory.ts';

/** The one folder of committed histories, replayed by test/replay/replay.test.ts. */
export const historiesDir = fileURLToPath(new URL('../replay/histories/', import.meta.url));

/**
 * Replays a fresh history against the current workflow code (catches non-determinism at once) and,
 * with RECORD_HISTORIES=1, commits it: `RECORD_HISTORIES=1 npx vitest run test/plugins test/export`
 * after a deliberate change to a workflow's shape.
 */
export async function checkHistory(handle: WorkflowHandle, name: string): Promise<void> {
  const history = await handle.fetchHistory();
  await Worker.runReplayHistory({ workflowsPath }, history, handle.workflowId);
  if (process.env.RECORD_HISTORIES === '1') {
    mkdirSync(historiesDir, { recursive: true });
    writeFileSync(`${historiesDir}${name}.json`, JSON.stringify(history, null, 1));
  }
}
