// The contract of the endpoint actor workflow, shared by the workflow, its activities and its
// callers (publisher, redeliver, resume, drain). Pure: only @temporalio/workflow and types.
import { defineSignal } from '@temporalio/workflow';

export const endpointActorWorkflowName = 'endpointActorWorkflow';

/** One actor per endpoint: `endpoint:<workspaceId>:<endpointId>`. */
export const endpointActorId = (workspaceId: string, endpointId: string) => `endpoint:${workspaceId}:${endpointId}`;

/** Where the endpoint lives; everything else (retry, breaker, batch) is the worker's settings. */
export interface EndpointRef {
  dbName: string;
  siteId: string;
  endpointId: string;
}

export interface EndpointActorInput extends EndpointRef {
  workspaceId: string;
  /** How long one pass may run; the activity's timeouts follow from it. */
  passBudgetMs: number;
  attemptTimeoutMs: number;
  heartbeatTimeoutMs: number;
  /** With nothing pending and no wake for this long, the actor ends (a wake starts it again). */
  idleMs: number;
  /** Passes per run before continue-as-new. */
  passesPerRun: number;
}

/** What one pass leaves behind. */
export interface DeliveryPassResult {
  /** Deliveries attempted in this pass. */
  attempted: number;
  /** The pass stopped on its budget with due rows left: run another at once. */
  more: boolean;
  /** Earliest scheduled retry (epoch ms), or null when nothing waits. */
  nextDueAt: number | null;
  /** The endpoint is paused (circuit breaker): nothing is sent until it is resumed. */
  paused: boolean;
}

/** The workflow's signature, for callers that start it by name without loading workflow code. */
export type EndpointActorWorkflow = (input: EndpointActorInput) => Promise<void>;

/** New deliveries are stored, the endpoint was resumed, or the drain found work: look again. */
export const wakeSignal = defineSignal('wake');
