import type { AnyBulkWriteOperation } from 'mongodb';
import type { Services } from '../core/context.ts';
import { newId } from '../core/ids.ts';
import { serviceVersion } from '../core/version.ts';
import type { DeliveryPassResult, EndpointRef } from '../../workflows/contracts/endpoint-actor.ts';
import { findBatch, recordBatch } from './history.ts';
import { creatorWithholds } from './creator-rights.ts';
import { eventCollections, type AttemptBatchDoc, type AttemptStatus, type DeliveryDoc, type EndpointDoc } from './model.ts';
import { secretBinding } from './secrets.ts';
import { sendDelivery } from './sender.ts';
import { DEFAULT_ENDPOINT_CONCURRENCY, retryDelayMs, webhookSettings } from './settings.ts';
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
  /** Set by writeOutcomes when the row was scheduled again (epoch ms). */
  retryAt: number | null;
  /** Not sent: the endpoint's creator lost the right to read the event (final; not the receiver's failure). */
  withheld?: true;
}

/**
 * A batch is up to this many times the endpoint's concurrency: its statements (rows by `_id`, the
 * endpoint's inflight and inbox, the history, the outcomes) cost about the same for 16 rows as for
 * 64, so bigger batches drain a backlog faster. It is also the bound on resends after a crash: a
 * dead pass's batch is sent again.
 */
export const BATCH_ROUNDS = 8;
/** Rounds of a batch sent before any attempt has succeeded (a dead receiver costs only these). */
const PROBE_ROUNDS = 2;

/** The filter of the rows this endpoint's actor owns and has not finished. */
const ownedPending = (ref: EndpointRef) => ({ siteId: ref.siteId, endpointId: ref.endpointId, status: 'pending' as const, via: 'endpoint' as const });

/** A row taken into a batch, with the number of the attempt about to be made. */
interface Claim {
  row: DeliveryDoc;
  attempt: number;
}

/**
 * One delivery pass of an endpoint's actor: sends the due rows oldest first, twice the
 * concurrency at a time, with the endpoint's concurrency and rate, writes every attempt to the
 * history and each row's outcome: delivered, failed (no attempts left, or a refused target), or
 * pending again with `nextAttemptAt` after the backoff. Stops at the pass budget, when nothing is
 * due, or when the circuit breaker pauses the endpoint. Idempotent as an activity: a retried pass
 * finds the batch a dead pass was sending (`inflight`), records those attempts as `interrupted`
 * and sends again with the same ids.
 *
 * Every statement in the loop is keyed by `_id` (a batch's rows, the endpoint) so that it costs
 * the same whatever the size of the outbox (the local engine uses no other index: any other
 * filter scans the collection). The pass scans its rows once when it starts; deliveries stored
 * after that reach it through the endpoint's `inbox`, where publishers push their ids while the
 * actor is busy (deliveries.ts).
 */
export async function runDeliveryPass(services: Services, ref: EndpointRef, control: PassControl): Promise<DeliveryPassResult> {
  const settings = webhookSettings(services);
  const { endpoints } = eventCollections(services.workspaceDb({ dbName: ref.dbName }));
  const began = Date.now();
  const busyFor = settings.passBudgetMs + settings.attemptTimeoutMs + 5_000;
  const key = { _id: ref.endpointId };
  let attempted = 0;
  // Start times are spaced across the whole pass, not per batch, so the rate holds between batches.
  const pace = { nextStart: 0 };

  let endpoint = await endpoints.findOne(key);
  if (!endpoint || endpoint.siteId !== ref.siteId || !endpoint.active) {
    attempted += await failWithoutSending(services, ref, endpoint?.active === false ? 'endpoint is inactive' : 'endpoint was deleted');
    return { attempted, more: false, nextDueAt: null, paused: false };
  }
  if (endpoint.pausedAt) return { attempted, more: false, nextDueAt: null, paused: true };
  const withholds = await creatorWithholds(services, services.workspaceDb({ dbName: ref.dbName }), ref.siteId, endpoint);
  // The batch a dead pass was sending: its attempts whose outcome was never written are recorded
  // as interrupted and made again, with the same delivery id.
  const interrupted = new Map((endpoint.inflight ?? []).map((entry) => [entry.id, entry.attempt]));
  if (interrupted.size > 0 && endpoint.inflightBatch) {
    // The dead pass may have recorded that batch's history before it died: then what it sent is
    // known, and those rows get their outcome from it instead of an interrupted attempt and a resend.
    const recorded = await findBatch(services.workspaceDb({ dbName: ref.dbName }), ref.siteId, endpoint.inflightBatch);
    if (recorded) await settleRecorded(services, ref, recorded, interrupted);
  }
  // Busy from here, inbox emptied: a row stored from now on is pushed to the inbox, one stored
  // before is found by the scan below.
  await endpoints.updateOne(key, { $set: { busyUntil: new Date(Date.now() + busyFor), inbox: [], heldUntil: null } });
  let busySetAt = Date.now();
  const queue = new DueQueue();
  await queue.scan(services, ref);
  let lingerFrom = 0;
  let more = false;
  // The next batch's rows, read while the current one is sent and written: a read by `_id` that
  // changes nothing (only this actor changes its pending rows), so a pass that ends first just
  // drops it and the rows stay pending for the next scan.
  let readAhead: Promise<DeliveryDoc[]> | null = null;
  const batchOf = () => BATCH_ROUNDS * (endpoint!.concurrency ?? DEFAULT_ENDPOINT_CONCURRENCY);

  for (;;) {
    if (Date.now() - began >= settings.passBudgetMs || control.stopping()) {
      more = true;
      break;
    }
    if (queue.size === 0 && !readAhead) {
      if (queue.nextDueAt !== null && queue.nextDueAt <= Date.now()) {
        await queue.scan(services, ref); // a retry came due during the pass
        continue;
      }
      const inbox = await endpoints.findOne(key, { projection: { inbox: 1 } });
      if (inbox?.inbox?.length) {
        queue.add(await takeInbox(services, ref));
        lingerFrom = 0;
        continue;
      }
      // Caught up: stay a moment for the next event of a burst (cheap reads by _id) rather than
      // end the pass, which costs a round of Temporal commits to start again.
      lingerFrom ||= Date.now();
      if (Date.now() - lingerFrom < settings.lingerMs) {
        await new Promise((resolve) => setTimeout(resolve, settings.lingerPollMs));
        continue;
      }
      // Idle: the flag is cleared and the inbox taken in one statement, so a publisher either
      // pushed before (its row is taken here) or finds the flag cleared and wakes the actor.
      const last = await endpoints.findOneAndUpdate(key, { $set: { busyUntil: null, inbox: [], inflight: [] } }, { projection: { inbox: 1 } });
      const late = await loadDue(services, ref, last?.inbox ?? []);
      if (late.length === 0) break;
      await endpoints.updateOne(key, { $set: { busyUntil: new Date(Date.now() + busyFor) } });
      busySetAt = Date.now();
      queue.add(late.map((row) => row._id));
      continue;
    }
    lingerFrom = 0;
    const rows = await (readAhead ?? loadDue(services, ref, queue.take(batchOf())));
    readAhead = null;
    if (rows.length === 0) continue;
    const claims: Claim[] = [];
    const lost: Claim[] = [];
    for (const row of rows) {
      const dead = interruptedAttempt(row, interrupted.get(row._id));
      interrupted.delete(row._id);
      if (dead !== null) lost.push({ row, attempt: dead });
      claims.push({ row, attempt: (dead ?? row.attempts) + 1 });
    }
    await recordInterrupted(services, ref, lost);
    // One statement per batch: what is about to be sent (for a retried pass), the busy flag, the
    // inbox taken (its rows go in the next batches), and the endpoint's state as it was (a change
    // of settings, a deactivation, a deletion).
    const refresh = Date.now() - busySetAt > busyFor / 2;
    const batch = newId();
    const state = await endpoints.findOneAndUpdate(key, {
      $set: {
        // What a dead pass left and this one has not reached yet stays recorded too.
        inflight: [...claims.map((c) => ({ id: c.row._id, attempt: c.attempt })), ...[...interrupted].map(([id, attempt]) => ({ id, attempt }))],
        inflightBatch: batch,
        inbox: [],
        ...(refresh ? { busyUntil: new Date(Date.now() + busyFor) } : {}),
      },
    });
    if (refresh) busySetAt = Date.now();
    queue.add(state?.inbox ?? []);
    if (!state || !state.active || state.pausedAt) {
      // Publishers must wake the actor again once the endpoint is switched on or resumed.
      if (state) await endpoints.updateOne(key, { $set: { busyUntil: null, inflight: [] } });
      if (state?.pausedAt) return { attempted, more: false, nextDueAt: null, paused: true };
      attempted += await failWithoutSending(services, ref, state ? 'endpoint is inactive' : 'endpoint was deleted');
      return { attempted, more: false, nextDueAt: null, paused: false };
    }
    endpoint = state;
    if (queue.size > 0) {
      const next = loadDue(services, ref, queue.take(batchOf()));
      next.catch(() => undefined); // awaited with the next batch; a pass that ends first drops it
      readAhead = next;
    }
    const { outcomes, unsent } = await sendBatch(services, ref, endpoint, claims, control, pace, batch, began + settings.passBudgetMs, withholds);
    queue.settled(rows.map((row) => row._id));
    queue.requeue(unsent.map((claim) => claim.row._id));
    attempted += outcomes.length;
    queue.retryAt(outcomes.filter((o) => o.retryAt !== null).map((o) => o.retryAt!));
    if (await tripBreaker(services, ref, endpoint, outcomes)) return { attempted, more: false, nextDueAt: null, paused: true };
    const retryAt = outcomes.map((o) => o.retryAt).filter((at): at is number => at !== null);
    if (retryAt.length > 0 && outcomes.every((o) => o.status !== 'succeeded')) {
      // The whole batch failed: the receiver is down, not one delivery. Sending the rest now would
      // only fill the history and load the database the other endpoints share, so the actor holds
      // until the batch's first retry, which probes the receiver again. What waits is not attempted.
      const heldUntil = Math.min(...retryAt);
      await endpoints.updateOne(key, { $set: { busyUntil: null, inbox: [], inflight: [], heldUntil: new Date(heldUntil) } });
      return { attempted, more: false, nextDueAt: heldUntil, paused: false };
    }
  }
  return { attempted, more, nextDueAt: queue.nextDueAt, paused: false };
}

/**
 * The ids of the rows a pass still has to send, oldest first, and the earliest retry not due yet.
 * Filled by one scan of the endpoint's pending rows (ids and times only, no bodies) and by the inbox.
 */
class DueQueue {
  private ids: string[] = [];
  private seen = new Set<string>();
  nextDueAt: number | null = null;

  get size() {
    return this.ids.length;
  }

  async scan(services: Services, ref: EndpointRef) {
    const now = services.clock.now().getTime();
    const rows = await eventCollections(services.workspaceDb({ dbName: ref.dbName }))
      .deliveries.find(ownedPending(ref), { projection: { _id: 1, nextAttemptAt: 1 } })
      .toArray();
    this.nextDueAt = null;
    const due: string[] = [];
    for (const row of rows) {
      const at = row.nextAttemptAt?.getTime() ?? 0;
      if (at <= now) due.push(row._id);
      else this.retryAt([at]);
    }
    // Ids are time-ordered (core/ids.ts): sorting them sends the oldest first.
    this.ids = [...new Set([...this.ids, ...due])].sort();
    for (const id of due) this.seen.add(id);
  }

  /** Ids from the inbox: newer than everything queued; loaded (and checked) when their batch comes. */
  add(ids: string[]) {
    for (const id of ids) {
      if (this.seen.has(id)) continue;
      this.seen.add(id);
      this.ids.push(id);
    }
  }

  /**
   * The next ids to load. They stay `seen` until `settled`: the inbox may name a row the scan
   * found too, and queueing it again while its batch (or the read-ahead) holds it sends it twice.
   */
  take(n: number) {
    return this.ids.splice(0, n);
  }

  /** Not sent after all (the batch stopped early): first in line again. */
  requeue(ids: string[]) {
    for (const id of ids) this.seen.add(id);
    this.ids.unshift(...ids);
  }

  /** Their outcome is written: a row sent in this pass may come back (a retry, found by a later scan). */
  settled(ids: string[]) {
    for (const id of ids) this.seen.delete(id);
  }

  retryAt(times: number[]) {
    for (const at of times) if (this.nextDueAt === null || at < this.nextDueAt) this.nextDueAt = at;
  }
}

/** The rows with these ids that this actor still owes and that are due now (by `_id`: no scan). */
async function loadDue(services: Services, ref: EndpointRef, ids: string[]): Promise<DeliveryDoc[]> {
  if (ids.length === 0) return [];
  const now = services.clock.now().getTime();
  const rows = await eventCollections(services.workspaceDb({ dbName: ref.dbName }))
    .deliveries.find({ _id: { $in: ids } })
    .toArray();
  return rows
    .filter((row) => row.siteId === ref.siteId && row.endpointId === ref.endpointId && row.status === 'pending' && row.via === 'endpoint')
    .filter((row) => (row.nextAttemptAt?.getTime() ?? 0) <= now)
    .sort((a, b) => (a._id < b._id ? -1 : 1));
}

/**
 * The attempt a dead pass left without an outcome, if any: the batch it was sending names the
 * attempt (the row's count was not raised to it), or the row is still `claimed` by the design
 * before this one (whose claim raised the count).
 */
function interruptedAttempt(row: DeliveryDoc, inflight: number | undefined): number | null {
  if (row.claimed) return row.attempts;
  if (inflight !== undefined && inflight > row.attempts) return inflight;
  return null;
}

/** Empties the endpoint's inbox (one atomic statement) and returns the ids it held. */
async function takeInbox(services: Services, ref: EndpointRef): Promise<string[]> {
  const { endpoints } = eventCollections(services.workspaceDb({ dbName: ref.dbName }));
  const taken = await endpoints.findOneAndUpdate({ _id: ref.endpointId }, { $set: { inbox: [] } }, { projection: { inbox: 1 } });
  return taken?.inbox ?? [];
}

/**
 * Sends each claimed row (bounded concurrency, optional rate), then writes every outcome. A row
 * whose event the endpoint's creator may no longer read is not sent: it fails at once (final).
 */
async function sendBatch(
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
    else outcomes.push({ ...claim, status: 'failed', responseCode: null, error: why, startedAt: now, finishedAt: now, final: true, retryAt: null, withheld: true });
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
      outcomes.push({ row, attempt, status: refused.status, responseCode: null, error: refused.error, startedAt: at, finishedAt: at, final: refused.final, retryAt: null });
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
    retryAt: null,
  };
}

/**
 * The batch's history (one document, history.ts) and then each row's new state, in as few
 * statements as possible (the local engine pays per statement and more per document written), each
 * keyed by `_id`: one update per (response code, attempt) for the delivered rows, one per other row.
 * History first: a pass that dies between the two leaves the outcomes recorded, and the retried
 * pass writes them from there (`settleRecorded`).
 */
async function writeOutcomes(services: Services, ref: EndpointRef, outcomes: Outcome[], batch: string, unsent: Claim[] = []): Promise<void> {
  // A batch that sent nothing is still recorded when it left rows out: the next pass reads there
  // that they were not sent (they are still on the endpoint's inflight).
  if (outcomes.length === 0 && unsent.length === 0) return;
  await recordBatch(services.workspaceDb({ dbName: ref.dbName }), {
    siteId: ref.siteId,
    endpointId: ref.endpointId,
    batch,
    ...(unsent.length ? { unsent: unsent.map((claim) => claim.row._id) } : {}),
    attempts: outcomes.map((o) => ({
      deliveryId: o.row._id,
      event: o.row.event,
      attempt: o.attempt,
      status: o.status,
      responseCode: o.responseCode,
      error: o.error,
      startedAt: o.startedAt,
      finishedAt: o.finishedAt,
      durationMs: o.finishedAt.getTime() - o.startedAt.getTime(),
      ...(o.final ? { final: true as const } : {}),
    })),
  });
  await writeRowOutcomes(services, ref, outcomes);
}

async function writeRowOutcomes(services: Services, ref: EndpointRef, outcomes: Outcome[]): Promise<void> {
  const { retry } = webhookSettings(services);
  const { deliveries } = eventCollections(services.workspaceDb({ dbName: ref.dbName }));
  const delivered = new Map<string, Outcome[]>();
  const others: AnyBulkWriteOperation<DeliveryDoc>[] = [];
  for (const o of outcomes) {
    if (o.status === 'succeeded' && !o.final) {
      const group = `${o.responseCode}/${o.attempt}`;
      delivered.set(group, [...(delivered.get(group) ?? []), o]);
      continue;
    }
    const last = o.final || o.attempt >= retry.maximumAttempts;
    const common = { attempts: o.attempt, responseCode: o.responseCode, error: o.error, updatedAt: o.finishedAt, claimed: false };
    if (!last) o.retryAt = o.finishedAt.getTime() + retryDelayMs(retry, o.attempt);
    const set = last ? { ...common, status: 'failed' as const, finishedAt: o.finishedAt } : { ...common, nextAttemptAt: new Date(o.retryAt!) };
    // Only this actor changes its pending rows, and it read them as pending: `_id` is enough.
    others.push({ updateOne: { filter: { _id: o.row._id }, update: { $set: set } } });
  }
  for (const group of delivered.values()) {
    const at = new Date(Math.max(...group.map((o) => o.finishedAt.getTime())));
    await deliveries.updateMany(
      { _id: { $in: group.map((o) => o.row._id) } },
      { $set: { status: 'delivered', attempts: group[0].attempt, responseCode: group[0].responseCode, error: null, claimed: false, updatedAt: at, finishedAt: at } },
    );
  }
  if (others.length) await deliveries.bulkWrite(others, { ordered: false });
}

/**
 * A dead pass recorded this batch's history and may have died before the rows' outcomes: the rows
 * still short of their recorded attempt get it now, and leave the interrupted set (not sent again).
 */
async function settleRecorded(services: Services, ref: EndpointRef, recorded: AttemptBatchDoc, interrupted: Map<string, number>): Promise<void> {
  const ids = recorded.attempts.map((a) => a.deliveryId);
  const rows = new Map(
    (await eventCollections(services.workspaceDb({ dbName: ref.dbName })).deliveries.find({ _id: { $in: ids } }).toArray()).map((row) => [row._id, row]),
  );
  const outcomes: Outcome[] = [];
  // Left out of the batch when it stopped early: never sent, so not interrupted either.
  for (const id of recorded.unsent ?? []) interrupted.delete(id);
  for (const a of recorded.attempts) {
    if (interrupted.get(a.deliveryId) === a.attempt) interrupted.delete(a.deliveryId);
    const row = rows.get(a.deliveryId);
    if (!row || row.status !== 'pending' || row.attempts >= a.attempt || a.status === 'interrupted' || a.status === 'paused') continue;
    const at = a.finishedAt ?? services.clock.now();
    outcomes.push({ row, attempt: a.attempt, status: a.status, responseCode: a.responseCode, error: a.error, startedAt: a.startedAt ?? at, finishedAt: at, final: a.final === true, retryAt: null });
  }
  await writeRowOutcomes(services, ref, outcomes);
}

/** Attempts whose pass died before writing anything: recorded as `interrupted`, never overwritten. */
async function recordInterrupted(services: Services, ref: EndpointRef, claims: Claim[]): Promise<void> {
  if (claims.length === 0) return;
  const { attempts } = eventCollections(services.workspaceDb({ dbName: ref.dbName }));
  await attempts.bulkWrite(
    claims.map(({ row, attempt }) => ({
      updateOne: {
        filter: { siteId: ref.siteId, deliveryId: row._id, attempt },
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
      .limit(webhookSettings(services).batchSize)
      .toArray();
    if (rows.length === 0) return count;
    const at = services.clock.now();
    await writeOutcomes(
      services,
      ref,
      rows.map((row) => ({ row, attempt: row.attempts + 1, status: 'failed', responseCode: null, error, startedAt: at, finishedAt: at, final: true, retryAt: null })),
      newId(),
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
async function tripBreaker(services: Services, ref: EndpointRef, endpoint: EndpointDoc, all: Outcome[]): Promise<boolean> {
  const { endpoints, attempts } = eventCollections(services.workspaceDb({ dbName: ref.dbName }));
  // What was withheld says nothing about the receiver.
  const outcomes = all.filter((o) => !o.withheld);
  const key = { _id: ref.endpointId };
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
  const { breakerMs } = webhookSettings(services);
  if (now.getTime() - endpoint.failingSince.getTime() < breakerMs) return false;
  const minutes = Math.round(breakerMs / 60_000);
  const reason = `every attempt failed for ${minutes >= 1 ? `${minutes} min` : `${Math.round(breakerMs / 1000)} s`} (last: ${outcomes.at(-1)!.error ?? 'failed'})`;
  const paused = await endpoints.updateOne({ ...key, pausedAt: null }, { $set: { pausedAt: now, pauseReason: reason, busyUntil: null, inflight: [] } });
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
