import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { Services } from '../core/context.ts';
import { serviceVersion } from '../core/version.ts';
import type { EndpointRef } from '../../workflows/contracts/endpoint-actor.ts';
import type { EndpointDoc } from './model.ts';
import { writeOutcomes, type Claim, type Outcome } from './outcomes.ts';
import { secretBinding } from './secrets.ts';
import { sendDelivery, type SendResult } from './sender.ts';
import { DEFAULT_ENDPOINT_CONCURRENCY, webhookSettings } from './settings.ts';
import { signPayload, WEBHOOK_HEADERS } from './signing.ts';
import { TargetRejectedError, type VettedTarget } from './target-guard.ts';

/** What the activity lends the pass: a heartbeat and whether the worker wants it to stop. */
export interface PassControl {
  heartbeat(): void;
  stopping(): boolean;
}

/** Rounds of a batch sent before any attempt has succeeded (a dead receiver costs only these). */
const PROBE_ROUNDS = 2;

/**
 * Sends each claimed row (bounded concurrency, optional rate), then writes every outcome. A row
 * whose event the endpoint's creator may no longer read is not sent: it fails at once (final).
 */
export async function sendBatch(
  services: Services,
  ref: EndpointRef,
  endpoint: EndpointDoc,
  taken: Claim[],
  control: PassControl,
  pace: { nextStart: number },
  batch: string,
  deadline: number,
  withholds: (event: string) => string | null,
): Promise<{ outcomes: Outcome[]; unsent: Claim[] }> {
  const settings = webhookSettings(services);
  const outcomes: Outcome[] = [];
  const claims: Claim[] = [];
  const now = services.clock.now();
  for (const claim of taken) {
    const why = withholds(claim.row.event);
    if (why === null) claims.push(claim);
    else
      outcomes.push({
        ...claim,
        status: 'failed',
        responseCode: null,
        error: why,
        startedAt: now,
        finishedAt: now,
        final: true,
        retryAt: null,
        withheld: true,
      });
  }
  let target: VettedTarget | null = null;
  let refused: { error: string; final: boolean; status: 'blocked' | 'failed' } | null = null;
  try {
    // Checked again now: the name may resolve elsewhere than when the endpoint was saved.
    if (claims.length > 0) target = await settings.guard.vet(endpoint.url);
  } catch (error) {
    if (!(error instanceof TargetRejectedError)) throw error;
    refused = error.transient ? { error: error.message, final: false, status: 'failed' } : { error: error.message, final: true, status: 'blocked' };
  }
  // Both unset when every claim was withheld: nothing to send.
  if (refused) {
    const at = services.clock.now();
    for (const { row, attempt } of claims) {
      outcomes.push({
        row,
        attempt,
        status: refused.status,
        responseCode: null,
        error: refused.error,
        startedAt: at,
        finishedAt: at,
        final: refused.final,
        retryAt: null,
      });
    }
  } else if (target) {
    const secret = settings.secrets.open(endpoint.secretEnc, secretBinding(ref.siteId, endpoint._id));
    const concurrency = endpoint.concurrency ?? DEFAULT_ENDPOINT_CONCURRENCY;
    const spacingMs = endpoint.maxPerSecond ? 1000 / endpoint.maxPerSecond : 0;
    const vetted = target;
    // A batch is up to BATCH_ROUNDS times the concurrency, but only its first PROBE_ROUNDS rounds
    // go out before an attempt has succeeded: a dead receiver costs those, as with the smaller
    // batches before, and the rest is not attempted (the pass then holds the endpoint).
    const window = PROBE_ROUNDS * concurrency;
    let succeeded = false;
    let finished = 0;
    let decide!: () => void;
    const decided = new Promise<void>((resolve) => (decide = resolve));
    let index = 0;
    const next = async (): Promise<Claim | null> => {
      if (index >= window && !succeeded) await decided;
      // Past the pass budget, or the worker shutting down: what is left waits for the next pass
      // (so a batch ends within one attempt timeout of the budget, as the activity's timeout assumes).
      if (index >= claims.length || (index >= window && !succeeded) || Date.now() >= deadline || control.stopping()) return null;
      return claims[index++];
    };
    await Promise.all(
      Array.from({ length: Math.min(concurrency, claims.length) }, async () => {
        for (let claim = await next(); claim; claim = await next()) {
          if (spacingMs) {
            // Starts spaced evenly: at most maxPerSecond attempts begin in any second.
            const wait = pace.nextStart - Date.now();
            pace.nextStart = Math.max(Date.now(), pace.nextStart) + spacingMs;
            if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          }
          const outcome = await attempt(services, vetted, secret, claim, control);
          outcomes.push(outcome);
          finished += 1;
          if (outcome.status === 'succeeded') succeeded = true;
          if (succeeded || finished >= Math.min(window, claims.length)) decide();
        }
      }),
    );
  }
  const sent = new Set(outcomes.map((o) => o.row._id));
  const unsent = taken.filter((claim) => !sent.has(claim.row._id));
  await writeOutcomes(services, ref, outcomes, batch, unsent);
  return { outcomes, unsent };
}

async function attempt(services: Services, target: VettedTarget, secret: string, { row, attempt: number }: Claim, control: PassControl): Promise<Outcome> {
  const settings = webhookSettings(services);
  const startedAt = services.clock.now();
  const timestamp = Math.floor(startedAt.getTime() / 1000);
  const headers = {
    [WEBHOOK_HEADERS.signature]: signPayload(secret, timestamp, row.body),
    [WEBHOOK_HEADERS.timestamp]: String(timestamp),
    [WEBHOOK_HEADERS.delivery]: row._id,
    [WEBHOOK_HEADERS.event]: row.event,
    [WEBHOOK_HEADERS.attempt]: String(number),
    'user-agent': `cwb-webhooks/${serviceVersion}`,
  };
  const send = () =>
    sendDelivery(target, row.body, headers, {
      timeoutMs: settings.attemptTimeoutMs,
      onWait: () => control.heartbeat(),
      waitEveryMs: Math.max(200, Math.min(1000, settings.heartbeatTimeoutMs / 3)),
    });
  const result = services.tracing.enabled ? await tracedSend(services, target, row.event, send) : await send();
  return {
    row,
    attempt: number,
    status: result.outcome,
    responseCode: result.responseCode,
    error: result.error,
    startedAt,
    finishedAt: services.clock.now(),
    final: false,
    retryAt: null,
  };
}

/**
 * The outgoing request as a client span of the pass's trace (HTTP client semantic conventions).
 * The URL is recorded without its query (a receiver's token may sit there) and no trace context
 * is sent to the receiver: a third party learns nothing of ours.
 */
async function tracedSend(services: Services, target: VettedTarget, event: string, send: () => Promise<SendResult>): Promise<SendResult> {
  const { url } = target;
  return services.tracing.tracer.startActiveSpan(
    'POST',
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': 'POST',
        'url.full': `${url.protocol}//${url.host}${url.pathname}`,
        'server.address': url.hostname,
        'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
        'cwb.webhook.event': event,
      },
    },
    async (span) => {
      const result = await send();
      if (result.responseCode !== null) span.setAttribute('http.response.status_code', result.responseCode);
      if (result.outcome !== 'succeeded') span.setStatus({ code: SpanStatusCode.ERROR, message: result.error ?? result.outcome });
      span.end();
      return result;
    },
  );
}
