import { beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import proto from '@temporalio/proto';
import { workflowsPath } from '../../services/worker-factory.ts';

// `workspace.json`: one actor run through provision, suspend, reactivate, indexes and delete, each
// command awaited through the actor's update (recorded by `npx tsx test/replay/record.ts workspace`);
// `workspace-signals-only.json`: the same recorded before the actor had the update, so runs started
// by the previous release still replay. `workspace-undelete.json` (a deletion's timer, cancelled by an
// undelete) and `workspace-purge.json` (the timer fires: final backup as a child, then the purge),
// recorded by `npx tsx test/replay/record.ts workspace-purge`.
const history = (name: string) =>
  proto.temporal.api.history.v1.History.fromObject(
    JSON.parse(readFileSync(fileURLToPath(new URL(`../replay/histories/${name}.json`, import.meta.url)), 'utf8')),
  );
const nondeterministicPath = fileURLToPath(new URL('../replay/nondeterministic/index.ts', import.meta.url));

describe('the workspace actor replays its committed histories', () => {
  beforeAll(() => {
    try {
      Runtime.install({ logger: new DefaultLogger('WARN') });
    } catch {
      // Already installed in this process.
    }
  });

  it.each(['workspace', 'workspace-signals-only', 'workspace-undelete', 'workspace-purge'])(
    'replays %s.json against the current workflow code',
    async (name) => {
      await Worker.runReplayHistory({ workflowsPath }, history(name));
    },
  );

  it('holds the update: each command awaited is accepted and completed in the recorded run', () => {
    const types = history('workspace').events!.map((event) => event.eventType);
    const { EventType } = proto.temporal.api.enums.v1;
    expect(types.filter((type) => type === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED)).toHaveLength(5);
    expect(types.filter((type) => type === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED)).toHaveLength(5);
  });

  it.each(['workspace', 'workspace-signals-only'])('fails %s.json against a changed actor (negative control)', async (name) => {
    await expect(Worker.runReplayHistory({ workflowsPath: nondeterministicPath }, history(name))).rejects.toBeInstanceOf(DeterminismViolationError);
  });
});
