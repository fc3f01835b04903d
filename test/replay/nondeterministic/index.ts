import { condition, defineSignal, proxyActivities, setHandler, sleep } from '@temporalio/workflow';
import type * as activities from '../../../activities/probe.ts';

const { stampProbe } = proxyActivities<ReturnType<typeof activities.createProbeActivities>>({
  startToCloseTimeout: '10 seconds',
});

/**
 * The negative control of the replay test: same name as the real workflow, but a timer before the
 * activity. Replaying a recorded history against it must raise DeterminismViolationError.
 */
export async function probeWorkflow(probeId: string): Promise<{ probeId: string; stampedAt: string }> {
  await sleep('1 second');
  const stampedAt = await stampProbe(probeId);
  return { probeId, stampedAt };
}

/**
 * The workspace actor's negative control: same name and commands, but suspension runs the
 * reactivation activity. The recorded `workspace.json` must not replay against it.
 */
export async function workspaceWorkflow(input: { workspaceId: string }): Promise<void> {
  const queue: { kind: string }[] = [];
  setHandler(defineSignal<[{ kind: string }]>('workspaceCommand'), (command) => {
    queue.push(command);
  });
  const acts = proxyActivities<Record<string, (...args: unknown[]) => Promise<unknown>>>({ startToCloseTimeout: '1 minute' });
  while (queue.length > 0 || (await condition(() => queue.length > 0, '1 second'))) {
    const command = queue.shift()!;
    if (command.kind === 'provision') await acts.provisionWorkspaceDatabase(input.workspaceId);
    else await acts.reactivateWorkspace(input.workspaceId);
  }
}

/** Negative control for the endpoint actor: a timer before its first delivery pass. */
export async function endpointActorWorkflow(): Promise<void> {
  await sleep('1 second');
}
