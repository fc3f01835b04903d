import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Worker } from '@temporalio/worker';
import proto from '@temporalio/proto';

/** A recorded run of `scheduleEntryWorkflow` (publish then unpublish) must replay on the current code. */
describe('schedule workflow replay', () => {
  it('replays the committed history without a determinism error', async () => {
    const json = JSON.parse(readFileSync(new URL('./histories/schedule.json', import.meta.url), 'utf8'));
    const history = proto.temporal.api.history.v1.History.fromObject(json);
    expect(history.events?.length).toBeGreaterThan(5);
    await Worker.runReplayHistory({ workflowBundle: { codePath: resolve(process.env.TEST_WORKFLOW_BUNDLE!) } }, history);
  });
});
