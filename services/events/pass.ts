import type { Services } from '../core/context.ts';
import { newId } from '../core/ids.ts';
import type { DeliveryPassResult, EndpointRef } from '../../workflows/contracts/endpoint-actor.ts';
import { sendBatch, type PassControl } from './batch-sender.ts';
import { tripBreaker } from './circuit-breaker.ts';
import { creatorWithholds } from './creator-rights.ts';
import { DueQueue, loadDue, takeInbox } from './delivery-queue.ts';
import { findBatch } from './history.ts';
import { eventCollections, type DeliveryDoc } from './model.ts';
import { failWithoutSending, recordInterrupted, settleRecorded, type Claim } from './outcomes.ts';
import { DEFAULT_ENDPOINT_CONCURRENCY, webhookSettings } from './settings.ts';

/**
 * A batch is up to this many times the endpoint's concurrency: its statements (rows by `_id`, the
 * endpoint's inflight and inbox, the history, the outcomes) cost about the same for 16 rows as for
 * 64, so bigger batches drain a backlog faster. It is also the bound on resends after a crash: a
 * dead pass's batch is sent again.
 */
export const BATCH_ROUNDS = 8;

/**
 * One delivery pass of an endpoint's actor: sends the due rows oldest first, BATCH_ROUNDS times the
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
 * The attempt a dead pass left without an outcome, if any: the batch it was sending names the
 * attempt (the row's count was not raised to it), or the row is still `claimed` by the design
 * before this one (whose claim raised the count).
 */
function interruptedAttempt(row: DeliveryDoc, inflight: number | undefined): number | null {
  if (row.claimed) return row.attempts;
  if (inflight !== undefined && inflight > row.attempts) return inflight;
  return null;
}
