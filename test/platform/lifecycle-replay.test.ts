import { beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import proto from '@temporalio/proto';
import { workflowsPath } from '../../services/worker-factory.ts';

// `workspace.json`: one actor run through provision, suspend, reactivate, indexes and delete
// (recorded by `npx tsx test/replay/record.ts workspace`).
const history = () =>
  proto.temporal.api.history.v1.History.fromObject(
    JSON.parse(readFileSync(fileURLToPath(new URL('../replay/histories/workspace.json', import.meta.url)), 'utf8')),
  );
const nondeterministicPath = fileURLToPath(new URL('../replay/nondeterministic/index.ts', import.meta.url));

describe('the workspace actor replays its committed history', () => {
  beforeAll(() => {
    try {
      Runtime.install({ logger: new DefaultLogger('WARN') });
    } catch {
      // Already installed in this process.
    }
  });

  it('replays against the current workflow code', async () => {
    await Worker.runReplayHistory({ workflowsPath }, history());
  });

  it('fails against a changed actor (negative control)', async () => {
    await expect(Worker.runReplayHistory({ workflowsPath: nondeterministicPath }, history())).rejects.toBeInstanceOf(DeterminismViolationError);
  });
});
