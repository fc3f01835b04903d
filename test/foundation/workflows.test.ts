import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { startWorld, type World } from '../support/world.ts';
import { workflowsPath } from '../../services/worker-factory.ts';
import { probeWorkflow } from '../../workflows/probe.ts';

// Committed histories and the negative control: test/replay/replay.test.ts.
describe('Temporal round trip and replay', () => {
  let world: World;
  beforeAll(async () => {
    try {
      Runtime.install({ logger: new DefaultLogger('WARN') });
    } catch {
      // Already installed in this process.
    }
    world = await startWorld({ worker: true });
  });
  afterAll(() => world?.close());

  it('runs a workflow and its activity on the real server through the worker', async () => {
    const probeId = `probe-${world.config.DB_PREFIX}`;
    const handle = await world.services.temporal.client.workflow.start(probeWorkflow, {
      taskQueue: world.services.temporal.taskQueue,
      workflowId: `probe:${probeId}`,
      args: [probeId],
    });
    const result = await handle.result();
    expect(result.probeId).toBe(probeId);
    const row = await world.services.platformDb.collection('probes').findOne({ _id: probeId as never });
    expect(row?.stampedAt.toISOString()).toBe(result.stampedAt);

    // The fresh history replays cleanly against the current code.
    const history = await handle.fetchHistory();
    await Worker.runReplayHistory({ workflowsPath }, history);
  });
});
