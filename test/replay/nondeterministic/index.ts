import { proxyActivities, sleep } from '@temporalio/workflow';
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

/** Negative control for the endpoint actor: a timer before its first delivery pass. */
export async function endpointActorWorkflow(): Promise<void> {
  await sleep('1 second');
}
