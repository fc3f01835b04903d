import type { Config } from '../core/config.ts';
import type { Services } from '../core/context.ts';
import { createWebhookSecretBox, type SecretBox } from './secrets.ts';
import { createTargetGuard, type Resolver, type TargetGuard } from './target-guard.ts';

/** Backoff between attempts of one delivery (Temporal activity retry policy). */
export interface RetrySettings {
  initialIntervalMs: number;
  backoffCoefficient: number;
  maximumIntervalMs: number;
  /** Attempts in all: 6 = the first try and 5 retries (contract 3.4). */
  maximumAttempts: number;
}

export interface WebhookOptions {
  /** DNS for the SSRF guard; tests inject one to make a name change its answer. */
  resolve?: Resolver;
  retry?: Partial<RetrySettings>;
  /** One HTTP attempt may take this long before it counts as a timeout. */
  attemptTimeoutMs?: number;
  /** A worker killed mid-attempt is noticed after this long and the attempt is retried. */
  heartbeatTimeoutMs?: number;
  /** How often the worker starts the actors of endpoints that owe deliveries and have none running. */
  drainIntervalMs?: number;
  /** An endpoint whose every attempt failed for this long is paused (circuit breaker). */
  breakerMs?: number;
  /** Due rows one actor reads at a time (it claims twice its concurrency of them at a time). */
  batchSize?: number;
  /** One delivery pass (activity) of an actor stops claiming after this long. */
  passBudgetMs?: number;
  /** An actor with nothing pending ends after this long without a wake. */
  idleMs?: number;
  /** A pass that has caught up keeps watching its inbox this long before it ends (bursts). */
  lingerMs?: number;
  /** Passes per actor run before it continues-as-new (keeps its history small). */
  passesPerRun?: number;
}

export interface WebhookSettings {
  retry: RetrySettings;
  attemptTimeoutMs: number;
  heartbeatTimeoutMs: number;
  drainIntervalMs: number;
  breakerMs: number;
  batchSize: number;
  passBudgetMs: number;
  idleMs: number;
  lingerMs: number;
  /** How often a lingering pass looks at its inbox (a read by _id). */
  lingerPollMs: number;
  passesPerRun: number;
  guard: TargetGuard;
  secrets: SecretBox;
  /** Actor wakes in flight in this process, by workflow id: a burst sends one, then one more. */
  wakes: Map<string, { again: boolean }>;
}

/** Production defaults: 10 s, 20 s, 40 s, 80 s, 160 s between the six attempts (cap 30 min). */
export const DEFAULT_RETRY: RetrySettings = {
  initialIntervalMs: 10_000,
  backoffCoefficient: 2,
  maximumIntervalMs: 30 * 60_000,
  maximumAttempts: 6,
};

/** Every attempt of an endpoint failed for 30 minutes: it is paused until someone resumes it. */
export const DEFAULT_BREAKER_MS = 30 * 60_000;

/**
 * A delivery pass on a worker that died (SIGKILL, a lost node) is run again elsewhere once this
 * long passed without a heartbeat: it bounds how late the deliveries it held start again
 * (docs/webhooks.md): the server notices within 2–3 s, retries the pass 1 s later, so it starts
 * again within 5 s of the death on a worker that polls. The pass beats every second and the worker
 * sends every beat (`maxHeartbeatThrottleInterval` 1 s, services/worker-factory.ts): an event loop
 * may stall 2 s before a live pass is taken for dead (it then stops, and its batch is sent again
 * with the same delivery ids).
 */
export const DEFAULT_HEARTBEAT_TIMEOUT_MS = 3_000;

/** Default per-endpoint sending concurrency (an endpoint may set 1–32). */
export const DEFAULT_ENDPOINT_CONCURRENCY = 8;

/** Delay after attempt `attempt` failed (1-based): the contract's backoff, capped. */
export function retryDelayMs(retry: RetrySettings, attempt: number): number {
  return Math.min(retry.maximumIntervalMs, retry.initialIntervalMs * retry.backoffCoefficient ** (attempt - 1));
}

/**
 * Settings of this process (`services.webhooks`), built once in services/runtime.ts from the
 * configuration and the runtime's `webhooks` options (tests shorten the backoff and timeouts).
 */
export function createWebhookSettings(config: Pick<Config, 'WEBHOOK_ALLOW_PRIVATE_TARGETS' | 'SECRET_KEY'>, options: WebhookOptions = {}): WebhookSettings {
  return {
    retry: { ...DEFAULT_RETRY, ...options.retry },
    attemptTimeoutMs: options.attemptTimeoutMs ?? 10_000,
    heartbeatTimeoutMs: options.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS,
    drainIntervalMs: options.drainIntervalMs ?? 60_000,
    breakerMs: options.breakerMs ?? DEFAULT_BREAKER_MS,
    batchSize: options.batchSize ?? 200,
    passBudgetMs: options.passBudgetMs ?? 20_000,
    idleMs: options.idleMs ?? 5 * 60_000,
    lingerMs: options.lingerMs ?? 2_000,
    lingerPollMs: 100,
    passesPerRun: options.passesPerRun ?? 200,
    guard: createTargetGuard({ allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_TARGETS, resolve: options.resolve }),
    secrets: createWebhookSecretBox(config.SECRET_KEY),
    wakes: new Map(),
  };
}

function configureWebhooks(services: Services): WebhookSettings {
  services.webhooks = createWebhookSettings(services.config);
  return services.webhooks;
}

export function webhookSettings(services: Services): WebhookSettings {
  // A test world with a publisher of its own never built them: the defaults.
  return (services.webhooks as WebhookSettings | undefined) ?? configureWebhooks(services);
}
