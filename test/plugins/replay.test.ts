import { describe, expect, it } from 'vitest';
import { Worker } from '@temporalio/worker';
import { workflowsPath } from '../../services/worker-factory.ts';
import { committedHistories } from './histories.ts';

describe('plugin-activation and static-export histories', () => {
  it('replay against the current workflow code', async () => {
    const histories = committedHistories();
    expect(histories.map((h) => h.workflowId).sort()).toEqual(['export-cancelled', 'export-full-and-queued', 'plugin-activation-failed', 'plugin-activation-ok']);
    for await (const result of Worker.runReplayHistories({ workflowsPath }, histories)) {
      expect(result.error, `${result.workflowId} no longer replays`).toBeUndefined();
    }
  });
});
