import type { Services } from '../core/context.ts';
import { createSecretBox, type SecretBox } from './secrets.ts';
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
  /** How often the worker re-starts deliveries that have no running workflow. */
  drainIntervalMs?: number;
  /** A pending delivery younger than this is left to the publisher that is starting it. */
  drainGraceMs?: number;
}

export interface WebhookSettings {
  retry: RetrySettings;
  attemptTimeoutMs: number;
  heartbeatTimeoutMs: number;
  drainIntervalMs: number;
  drainGraceMs: number;
  guard: TargetGuard;
  secrets: SecretBox;
}

/** Production defaults: 10 s, 20 s, 40 s, 80 s, 160 s between the six attempts (cap 30 min). */
export const DEFAULT_RETRY: RetrySettings = {
  initialIntervalMs: 10_000,
  backoffCoefficient: 2,
  maximumIntervalMs: 30 * 60_000,
  maximumAttempts: 6,
};

const registry = new WeakMap<Services, WebhookSettings>();

/** Settings of this process's services, fixed once when the publisher is built. */
export function configureWebhooks(services: Services, options: WebhookOptions = {}): WebhookSettings {
  const settings: WebhookSettings = {
    retry: { ...DEFAULT_RETRY, ...options.retry },
    attemptTimeoutMs: options.attemptTimeoutMs ?? 10_000,
    heartbeatTimeoutMs: options.heartbeatTimeoutMs ?? 30_000,
    drainIntervalMs: options.drainIntervalMs ?? 60_000,
    drainGraceMs: options.drainGraceMs ?? 30_000,
    guard: createTargetGuard({ allowPrivate: services.config.WEBHOOK_ALLOW_PRIVATE_TARGETS, resolve: options.resolve }),
    secrets: createSecretBox(services.config.SECRET_KEY),
  };
  registry.set(services, settings);
  return settings;
}

export function webhookSettings(services: Services): WebhookSettings {
  return registry.get(services) ?? configureWebhooks(services);
}
