import { workspaceWorkflowType } from '../../workflows/contracts/workspace.ts';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import proto from '@temporalio/proto';
import * as workflows from '../../workflows/index.ts';
import { mergeActivityGroups } from '../../activities/index.ts';
import { droppedWorkflowSpans } from '../../services/worker-factory.ts';
import { endpointActorWorkflowName } from '../../workflows/contracts/endpoint-actor.ts';
import { pluginActivationWorkflowType } from '../../workflows/contracts/plugin-activation.ts';
import { probeWorkflowType } from '../../workflows/contracts/probe.ts';
import { scheduleEntryWorkflowType } from '../../workflows/contracts/schedule.ts';
import { termRemovalWorkflowType } from '../../workflows/contracts/term-removal.ts';
import { staticExportWorkflowType } from '../../workflows/contracts/static-export.ts';
import { backupWorkflowType, restoreWorkflowType, scheduledBackupWorkflowType } from '../../workflows/contracts/backup.ts';
import { mailWorkflowType } from '../../workflows/contracts/mail.ts';
import { cloneWorkflowType } from '../../workflows/contracts/clone.ts';
import { contentImportWorkflowType } from '../../workflows/contracts/content-import.ts';
import { moveWorkflowType } from '../../workflows/contracts/move.ts';

/**
 * The one replay test: every committed history in test/replay/histories/ replays against the
 * workflow bundle the worker runs (built once by test/global-setup.ts), every workflow the worker
 * runs has at least one history there, and a changed workflow fails the replay (negative control).
 * Record histories with `npx tsx test/replay/record.ts` after a deliberate change of shape.
 */
const historiesDir = fileURLToPath(new URL('./histories/', import.meta.url));
// The bundle holds Temporal's OpenTelemetry workflow interceptors; their span sink is the worker's untraced one.
const bundle = () => ({ workflowBundle: { codePath: resolve(process.env.TEST_WORKFLOW_BUNDLE!) }, sinks: droppedWorkflowSpans });
const nondeterministicPath = fileURLToPath(new URL('./nondeterministic/index.ts', import.meta.url));

function committedHistories() {
  return readdirSync(historiesDir)
    .filter((name) => name.endsWith('.json'))
    .map((name) => {
      const history = proto.temporal.api.history.v1.History.fromObject(JSON.parse(readFileSync(`${historiesDir}${name}`, 'utf8')));
      const type = history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? '';
      return { workflowId: name.replace(/\.json$/, ''), history, type };
    });
}

describe('workflow contracts and committed histories', () => {
  it('each contract names a workflow the worker runs, and each workflow has a contract', () => {
    const contractTypes = [
      backupWorkflowType,
      restoreWorkflowType,
      scheduledBackupWorkflowType,
      cloneWorkflowType,
      contentImportWorkflowType,
      endpointActorWorkflowName,
      mailWorkflowType,
      moveWorkflowType,
      pluginActivationWorkflowType,
      probeWorkflowType,
      scheduleEntryWorkflowType,
      termRemovalWorkflowType,
      staticExportWorkflowType,
      workspaceWorkflowType,
    ].sort();
    expect(Object.keys(workflows).sort()).toEqual(contractTypes);
  });

  it('every workflow has a committed history, and every history replays on the worker bundle', async () => {
    const histories = committedHistories();
    const recorded = new Set(histories.map((h) => h.type));
    for (const name of Object.keys(workflows)) expect(recorded.has(name), `no committed history of ${name}`).toBe(true);
    for await (const result of Worker.runReplayHistories(bundle(), histories)) {
      expect(result.error, `${result.workflowId} no longer replays`).toBeUndefined();
    }
  });

  it('fails the replay when workflow code changes non-deterministically (negative control)', async () => {
    const probe = committedHistories().find((h) => h.type === probeWorkflowType)!;
    await expect(Worker.runReplayHistory({ workflowsPath: nondeterministicPath }, probe.history)).rejects.toBeInstanceOf(DeterminismViolationError);
  });

  it('refuses an activity name defined by two groups (Temporal would keep only one)', () => {
    const merged = mergeActivityGroups({ a: { one: () => 1 }, b: { two: () => 2 } });
    expect(Object.keys(merged).sort()).toEqual(['one', 'two']);
    expect(() => mergeActivityGroups({ a: { same: () => 1 }, b: { same: () => 2 } })).toThrow('activity same is defined by both a and b');
  });
});
