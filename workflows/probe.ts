import { proxyActivities } from '@temporalio/workflow';
import type * as activities from '../activities/probe.ts';
import type { ProbeOutcome } from './contracts/probe.ts';

const { stampProbe } = proxyActivities<ReturnType<typeof activities.createProbeActivities>>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 5 },
});

/**
 * A round trip through the worker and the database: the health check and the tests use it to
 * prove that Temporal, the worker and MongoDB are wired together.
 */
export async function probeWorkflow(probeId: string): Promise<ProbeOutcome> {
  const stampedAt = await stampProbe(probeId);
  return { probeId, stampedAt };
}
