import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import proto from '@temporalio/proto';
import { workflowsPath } from '../../services/worker-factory.ts';

// Recorded by test/replay/record-endpoint-actor.ts: a run that continued-as-new after two passes
// (three deliveries), and the next run, which ended idle.
const historiesDir = fileURLToPath(new URL('../replay/histories/', import.meta.url));
const nondeterministicPath = fileURLToPath(new URL('../replay/nondeterministic/index.ts', import.meta.url));
const load = (name: string) => proto.temporal.api.history.v1.History.fromObject(JSON.parse(readFileSync(`${historiesDir}${name}`, 'utf8')));
const NAMES = ['endpoint-actor-continued.json', 'endpoint-actor-idle.json'];

describe('endpoint actor histories', () => {
  it('were recorded with a continue-as-new and an idle end', () => {
    const continued = load(NAMES[0]).events ?? [];
    const idle = load(NAMES[1]).events ?? [];
    const kind = (e: { eventType?: unknown }) => proto.temporal.api.enums.v1.EventType[Number(e.eventType)];
    expect(kind(continued.at(-1)!)).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW');
    expect(kind(idle.at(-1)!)).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED');
  });

  it('replay against the current workflow code', async () => {
    for (const name of NAMES) await Worker.runReplayHistory({ workflowsPath }, load(name), name);
  }, 120_000);

  it('fail the replay against a non-deterministic change (negative control)', async () => {
    await expect(Worker.runReplayHistory({ workflowsPath: nondeterministicPath }, load(NAMES[0]))).rejects.toBeInstanceOf(DeterminismViolationError);
  }, 120_000);
});
