import { MongoBulkWriteError, type AnyBulkWriteOperation } from 'mongodb';
import type { Services } from '../core/context.ts';
import { newId } from '../core/ids.ts';
import { serviceVersion } from '../core/version.ts';
import type { DeliveryPassResult, EndpointRef } from '../../workflows/contracts/endpoint-actor.ts';
import { eventCollections, type AttemptDoc, type AttemptStatus, type DeliveryDoc, type EndpointDoc } from './model.ts';
import { secretBinding } from './secrets.ts';
import { sendDelivery } from './sender.ts';
import { DEFAULT_ENDPOINT_CONCURRENCY, retryDelayMs } from './settings.ts';
import { signPayload, WEBHOOK_HEADERS } from './signing.ts';
import { TargetRejectedError, type VettedTarget } from './target-guard.ts';

/** What the activity lends the pass: a heartbeat and whether the worker wants it to stop. */
export interface PassControl {
  heartbeat(): void;
  stopping(): boolean;
}

interface Outcome {
  row: DeliveryDoc;
  attempt: number;
  status: Exclude<AttemptStatus, 'interrupted' | 'paused'>;
  responseCode: number | null;
  error: string | null;
  startedAt: Date;
  finishedAt: Date;
  /** A refused target or a gone endpoint: final at once, no retry. */
  final: boolean;
}

/** The filter of the rows this endpoint's actor owns and has not finished. */
const ownedPending = (ref: EndpointRef) => ({ siteId: ref.siteId, endpointId: ref.endpointId, status: 'pending' as const, via: 'endpoint' as const });

/**
 * One delivery pass of an endpoint's actor: claims due rows in batches (oldest first), sends
 * them with the endpoint's concurrency and rate, writes every attempt to the history and each
 * row's outcome: delivered, failed (no attempts left, or a refused target), or pending again with
 * `nextAttemptAt` after the backoff. Stops at the pass budget, when nothing is due, or when the
 * circuit breaker pauses the endpoint. Idempotent as an activity: a retried pass finds the rows a
 * dead pass claimed, records that attempt as `interrupted` and sends again with the same id.
 */
export async function runDeliveryPass(services: Services, ref: EndpointRef, control: PassControl): Promise<DeliveryPassResult> {
  const settings = services.webhooks;
  const { deliveries, endpoints } = eventCollections(services.workspaceDb({ dbName: ref.dbName }));
  const began = Date.now();
  const busyFor = settings.passBudgetMs + settings.attemptTimeoutMs + 5_000;
  const endpointKey = { _id: ref.endpointId, siteId: ref.siteId };
  let attempted = 0;
  let more = false;
  let busySetAt = 0;
  // Start times are spaced across the whole pass, not per claim, so the rate holds between claims.
  const pace = { nextStart: 0 };
  let ahead: DeliveryDoc[] = [];
  for (;;) {
    const endpoint = await endpoints.findOne(endpointKey);
    if (!endpoint || !endpoint.active) {
      attempted += await failWithoutSending(services, ref, endpoint ? 'endpoint is inactive' : 'endpoint was deleted');
      return { attempted, more: false, nextDueAt: null, paused: false };
    }
    if (endpoint.pausedAt) return { attempted, more: false, nextDueAt: null, paused: true };
    if (Date.now() - began >= settings.passBudgetMs || control.stopping()) {
      more = true;
      break;
    }
    // Publishers read this after storing their rows: while it is set they need not wake the actor.
    if (Date.now() - busySetAt > busyFor / 2) {
      await endpoints.updateOne(endpointKey, { $set: { busyUntil: new Date(Date.now() + busyFor) } });
      busySetAt = Date.now();
    }
    // Due rows are read `batchSize` at a time (one query: on the local engine a query scans the
    // collection) and claimed twice the concurrency at a time: what a dying worker can leave
    // sent-but-unrecorded (and so send again, with the same delivery id) stays that small. Only
    // this actor changes its rows, so the read-ahead does not go stale.
    if (ahead.length === 0) ahead = await dueRows(services, ref, settings.batchSize);
    const rows = ahead.splice(0, 2 * (endpoint.concurrency ?? DEFAULT_ENDPOINT_CONCURRENCY));
    if (rows.length === 0) {
      // Idle, then look once more: a row stored between the read and the flag is seen either
      // here or by its publisher (who then finds the flag cleared and wakes the actor).
      await endpoints.updateOne(endpointKey, { $set: { busyUntil: null } });
      busySetAt = 0;
      if ((await dueRows(services, ref, 1)).length === 0) break;
      continue;
    }
    const outcomes = await sendBatch(services, ref, endpoint, rows, control, pace);
    attempted += outcomes.length;
    if (await tripBreaker(services, ref, endpoint, outcomes)) return { attempted, more: false, nextDueAt: null, paused: true };
  }
  const next = await deliveries.find(ownedPending(ref), { projection: { nextAttemptAt: 1 } }).sort({ nextAttemptAt: 1 }).limit(1).toArray();
  return { attempted, more, nextDueAt: next[0]?.nextAttemptAt?.getTime() ?? null, paused: false };
}

function dueRows(services: Services, ref: EndpointRef, limit: number): Promise<DeliveryDoc[]> {
  const { deliveries } = eventCollections(services.workspaceDb({ dbName: ref.dbName }));
  return deliveries
    .find({ ...ownedPending(ref), nextAttemptAt: { $lte: services.clock.now() } })
    .sort({ _id: 1 })
    .limit(limit)
    .toArray();
}

/** Claims the rows, sends each (bounded concurrency, optional rate), then writes every outcome. */
async function sendBatch(
  services: Services,
  ref: EndpointRef,
  endpoint: EndpointDoc,
  rows: DeliveryDoc[],
  control: PassControl,
  pace: { nextStart: number },
): Promise<Outcome[]> {
  const settings = services.webhooks;
  const { deliveries } = eventCollections(services.workspaceDb({ dbName: ref.dbName }));
  const ids = rows.map((row) => row._id);
  // A row still claimed was taken by a pass that died before writing its outcome.
  await recordInterrupted(services, ref, rows.filter((row) => row.claimed));
  await deliveries.updateMany({ _id: { $in: ids }, siteId: ref.siteId }, { $set: { claimed: true }, $inc: { attempts: 1 } });

  let target: VettedTarget | null = null;
  let refused: { error: string; final: boolean; status: 'blocked' | 'failed' } | null = null;
  try {
    // Checked again now: the name may resolve elsewhere than when the endpoint was saved.
    target = await settings.guard.vet(endpoint.url);
  } catch (error) {
    if (!(error instanceof TargetRejectedError)) throw error;
    refused = error.transient ? { error: error.message, final: false, status: 'failed' } : { error: error.message, final: true, status: 'blocked' };
  }
  const outcomes: Outcome[] = [];
  if (!target || refused) {
    const at = services.clock.now();
    for (const row of rows) {
      outcomes.push({ row, attempt: row.attempts + 1, status: refused!.status, responseCode: null, error: refused!.error, startedAt: at, finishedAt: at, final: refused!.final });
    }
  } else {
    const secret = settings.secrets.open(endpoint.secretEnc, secretBinding(ref.siteId, endpoint._id));
    const concurrency = endpoint.concurrency ?? DEFAULT_ENDPOINT_CONCURRENCY;
    const spacingMs = endpoint.maxPerSecond ? 1000 / endpoint.maxPerSecond : 0;
    let index = 0;
    const vetted = target;
    await Promise.all(
      Array.from({ length: Math.min(concurrency, rows.length) }, async () => {
        while (index < rows.length) {
          const row = rows[index++];
          if (spacingMs) {
            // Starts spaced evenly: at most maxPerSecond attempts begin in any second.
            const wait = pace.nextStart - Date.now();
            pace.nextStart = Math.max(Date.now(), pace.nextStart) + spacingMs;
            if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          }
          outcomes.push(await attempt(services, vetted, secret, row, control));
        }
      }),
    );
  }
  await writeOutcomes(services, ref, outcomes);
  return outcomes;
}

async function attempt(services: Services, target: VettedTarget, secret: string, row: DeliveryDoc, control: PassControl): Promise<Outcome> {
  const settings = services.webhooks;
  const number = row.attempts + 1;
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
  const result = await sendDelivery(target, row.body, headers, {
    timeoutMs: settings.attemptTimeoutMs,
    onWait: () => control.heartbeat(),
    waitEveryMs: Math.max(200, Math.min(1000, settings.heartbeatTimeoutMs / 3)),
  });
  return {
    row,
    attempt: number,
    status: result.outcome,
    responseCode: result.responseCode,
    error: result.error,
    startedAt,
    finishedAt: services.clock.now(),
    final: false,
  };
}

/**
 * One history row per attempt and the rows' new state. Written in as few statements as possible
 * (the local engine pays per statement): one insert of all history rows, one update per response
 * code for the delivered rows (their attempt count was set by the claim), one update per failed row.
 */
async function writeOutcomes(services: Services, ref: EndpointRef, outcomes: Outcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  const { retry } = services.webhooks;
  const { deliveries, attempts } = eventCollections(services.workspaceDb({ dbName: ref.dbName }));
  const history: AttemptDoc[] = outcomes.map((o) => ({
    _id: newId(),
    siteId: ref.siteId,
    deliveryId: o.row._id,
    endpointId: ref.endpointId,
    event: o.row.event,
    attempt: o.attempt,
    status: o.status,
    responseCode: o.responseCode,
    error: o.error,
    startedAt: o.startedAt,
    finishedAt: o.finishedAt,
    durationMs: o.finishedAt.getTime() - o.startedAt.getTime(),
  }));
  try {
    await attempts.insertMany(history, { ordered: false });
  } catch (error) {
    // A retried pass recording an attempt again: the unique (delivery, attempt) key keeps the first.
    if (!(error instanceof MongoBulkWriteError) || !duplicatesOnly(error)) throw error;
  }
  const delivered = new Map<number | null, Outcome[]>();
  const others: AnyBulkWriteOperation<DeliveryDoc>[] = [];
  for (const o of outcomes) {
    if (o.status === 'succeeded' && !o.final) {
      delivered.set(o.responseCode, [...(delivered.get(o.responseCode) ?? []), o]);
      continue;
    }
    const last = o.final || o.attempt >= retry.maximumAttempts;
    const common = { attempts: o.attempt, responseCode: o.responseCode, error: o.error, updatedAt: o.finishedAt, claimed: false };
    const set = last
      ? { ...common, status: 'failed' as const, finishedAt: o.finishedAt }
      : { ...common, nextAttemptAt: new Date(o.finishedAt.getTime() + retryDelayMs(retry, o.attempt)) };
    others.push({ updateOne: { filter: { _id: o.row._id, siteId: ref.siteId, status: 'pending' }, update: { $set: set } } });
  }
  for (const [responseCode, group] of delivered) {
    const at = new Date(Math.max(...group.map((o) => o.finishedAt.getTime())));
    await deliveries.updateMany(
      { _id: { $in: group.map((o) => o.row._id) }, siteId: ref.siteId, status: 'pending' },
      { $set: { status: 'delivered', responseCode, error: null, claimed: false, updatedAt: at, finishedAt: at } },
    );
  }
  if (others.length) await deliveries.bulkWrite(others, { ordered: false });
}

const duplicatesOnly = (error: MongoBulkWriteError) => {
  const errors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
  return errors.length > 0 && errors.every((e) => e.code === 11000);
};

/** Attempts whose pass died before writing anything: recorded as `interrupted`, never overwritten. */
async function recordInterrupted(services: Services, ref: EndpointRef, rows: DeliveryDoc[]): Promise<void> {
  if (rows.length === 0) return;
  const { attempts } = eventCollections(services.workspaceDb({ dbName: ref.dbName }));
  await attempts.bulkWrite(
    rows.map((row) => ({
      updateOne: {
        filter: { siteId: ref.siteId, deliveryId: row._id, attempt: row.attempts },
        update: {
          $setOnInsert: {
            _id: newId(),
            endpointId: ref.endpointId,
            event: row.event,
            status: 'interrupted' as const,
            responseCode: null,
            error: 'the worker stopped during this attempt',
            startedAt: null,
            finishedAt: null,
            durationMs: null,
          },
        },
        upsert: true,
      },
    })),
    { ordered: false },
  );
}

/** The endpoint was deleted or switched off: what it still owed fails at once, with a history row. */
async function failWithoutSending(services: Services, ref: EndpointRef, error: string): Promise<number> {
  let count = 0;
  for (;;) {
    const rows = await eventCollections(services.workspaceDb({ dbName: ref.dbName }))
      .deliveries.find(ownedPending(ref))
      .limit(services.webhooks.batchSize)
      .toArray();
    if (rows.length === 0) return count;
    const at = services.clock.now();
    await writeOutcomes(
      services,
      ref,
      rows.map((row) => ({ row, attempt: row.attempts + 1, status: 'failed', responseCode: null, error, startedAt: at, finishedAt: at, final: true })),
    );
    count += rows.length;
  }
}

/**
 * The circuit breaker: any success clears `failingSince`; a batch that failed entirely starts it,
 * or pauses the endpoint once every attempt has failed for `breakerMs`. A pause is written to the
 * history (attempt 0, status `paused`, of the delivery that tripped it), shown by the admin page,
 * and announced with the `webhook.endpointPaused` action for plugins. Returns true when paused.
 */
async function tripBreaker(services: Services, ref: EndpointRef, endpoint: EndpointDoc, outcomes: Outcome[]): Promise<boolean> {
  const { endpoints, attempts } = eventCollections(services.workspaceDb({ dbName: ref.dbName }));
  const key = { _id: ref.endpointId, siteId: ref.siteId };
  if (outcomes.length === 0) return false;
  if (outcomes.some((o) => o.status === 'succeeded')) {
    if (endpoint.failingSince) await endpoints.updateOne(key, { $set: { failingSince: null } });
    return false;
  }
  const now = services.clock.now();
  if (!endpoint.failingSince) {
    await endpoints.updateOne(key, { $set: { failingSince: outcomes[0].startedAt } });
    return false;
  }
  const { breakerMs } = services.webhooks;
  if (now.getTime() - endpoint.failingSince.getTime() < breakerMs) return false;
  const minutes = Math.round(breakerMs / 60_000);
  const reason = `every attempt failed for ${minutes >= 1 ? `${minutes} min` : `${Math.round(breakerMs / 1000)} s`} (last: ${outcomes.at(-1)!.error ?? 'failed'})`;
  const paused = await endpoints.updateOne({ ...key, pausedAt: null }, { $set: { pausedAt: now, pauseReason: reason, busyUntil: null } });
  const trippedBy = outcomes.at(-1)!.row;
  await attempts.updateOne(
    { siteId: ref.siteId, deliveryId: trippedBy._id, attempt: 0 },
    {
      $set: { endpointId: ref.endpointId, event: trippedBy.event, status: 'paused', responseCode: null, error: `endpoint paused: ${reason}`, startedAt: now, finishedAt: now, durationMs: 0 },
      $setOnInsert: { _id: newId() },
    },
    { upsert: true },
  );
  if (paused.modifiedCount > 0) {
    await services.hooks
      .doAction('webhook.endpointPaused', { siteId: ref.siteId, endpointId: ref.endpointId, name: endpoint.name, pausedAt: now.toISOString(), reason })
      .catch((error: unknown) => services.log.warn({ endpointId: ref.endpointId, err: error instanceof Error ? error.message : String(error) }, 'webhook.endpointPaused action failed'));
  }
  return true;
}
