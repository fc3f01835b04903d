import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import proto from '@temporalio/proto';
import { startWorld, type World } from '../support/world.ts';
import { workflowsPath } from '../../services/worker-factory.ts';
import { probeWorkflow } from '../../workflows/probe.ts';

const historiesDir = fileURLToPath(new URL('../replay/histories/', import.meta.url));
/** Histories are committed as the JSON of the protobuf message (what `fetchHistory` returns). */
const loadHistory = (name: string) =>
  proto.temporal.api.history.v1.History.fromObject(JSON.parse(readFileSync(`${historiesDir}${name}`, 'utf8')));
const nondeterministicPath = fileURLToPath(new URL('../replay/nondeterministic/index.ts', import.meta.url));

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

  it('replays every committed history against the current workflow code', async () => {
    const files = readdirSync(historiesDir).filter((name) => name.endsWith('.json'));
    expect(files.length).toBeGreaterThan(0);
    const histories = files.map((name) => ({
      workflowId: name,
      history: loadHistory(name),
    }));
    for await (const result of Worker.runReplayHistories({ workflowsPath }, histories)) {
      expect(result.error, `${result.workflowId} no longer replays`).toBeUndefined();
    }
  });

  it('fails the replay when workflow code changes non-deterministically (negative control)', async () => {
    const [name] = readdirSync(historiesDir).filter((file) => file.startsWith('probe'));
    const history = loadHistory(name);
    await expect(Worker.runReplayHistory({ workflowsPath: nondeterministicPath }, history)).rejects.toBeInstanceOf(
      DeterminismViolationError,
    );
  });
});
