// The contract of the probe workflow (health check and tests: Temporal, worker and database wired).

/** The workflow type; equals the function's name exported from workflows/index.ts. */
export const probeWorkflowType = 'probeWorkflow';

export const probeWorkflowId = (probeId: string) => `probe:${probeId}`;

export interface ProbeOutcome {
  probeId: string;
  stampedAt: string;
}
