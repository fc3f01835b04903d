import type { AnyBulkWriteOperation } from 'mongodb';
import type { Services } from '../core/context.ts';
import { newId } from '../core/ids.ts';
import type { EndpointRef } from '../../workflows/contracts/endpoint-actor.ts';
import { ownedPending } from './delivery-queue.ts';
import { recordBatch } from './history.ts';
import { eventCollections, type AttemptBatchDoc, type AttemptStatus, type DeliveryDoc } from './model.ts';
import { retryDelayMs, webhookSettings } from './settings.ts';

/** A row taken into a batch, with the number of the attempt about to be made. */
export interface Claim {
  row: DeliveryDoc;
  attempt: number;
}

/** What became of one claim: written to the batch's history and to its row. */
export interface Outcome {
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
 * The batch's history (one document, history.ts) and then each row's new state, in as few
 * statements as possible (the local engine pays per statement and more per document written), each
 * keyed by `_id`: one update per (response code, attempt) for the delivered rows, one per other row.
 * History first: a pass that dies between the two leaves the outcomes recorded, and the retried
 * pass writes them from there (`settleRecorded`).
 */
export async function writeOutcomes(services: Services, ref: EndpointRef, outcomes: Outcome[], batch: string, unsent: Claim[] = []): Promise<void> {
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
  const { webhookDeliveries } = services.metrics;
  for (const o of outcomes) {
    if (o.status === 'succeeded' && !o.final) {
      webhookDeliveries.inc({ outcome: 'delivered' });
      const group = `${o.responseCode}/${o.attempt}`;
      delivered.set(group, [...(delivered.get(group) ?? []), o]);
      continue;
    }
    const last = o.final || o.attempt >= retry.maximumAttempts;
    // Bounded: delivered, retry (a failed attempt scheduled again), failed (the last one), withheld.
    webhookDeliveries.inc({ outcome: o.withheld ? 'withheld' : last ? 'failed' : 'retry' });
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
      {
        $set: {
          status: 'delivered',
          attempts: group[0].attempt,
          responseCode: group[0].responseCode,
          error: null,
          claimed: false,
          updatedAt: at,
          finishedAt: at,
        },
      },
    );
  }
  if (others.length) await deliveries.bulkWrite(others, { ordered: false });
}

/**
 * A dead pass recorded this batch's history and may have died before the rows' outcomes: the rows
 * still short of their recorded attempt get it now, and leave the interrupted set (not sent again).
 */
export async function settleRecorded(services: Services, ref: EndpointRef, recorded: AttemptBatchDoc, interrupted: Map<string, number>): Promise<void> {
  const ids = recorded.attempts.map((a) => a.deliveryId);
  const rows = new Map(
    (
      await eventCollections(services.workspaceDb({ dbName: ref.dbName }))
        .deliveries.find({ _id: { $in: ids } })
        .toArray()
    ).map((row) => [row._id, row]),
  );
  const outcomes: Outcome[] = [];
  // Left out of the batch when it stopped early: never sent, so not interrupted either.
  for (const id of recorded.unsent ?? []) interrupted.delete(id);
  for (const a of recorded.attempts) {
    if (interrupted.get(a.deliveryId) === a.attempt) interrupted.delete(a.deliveryId);
    const row = rows.get(a.deliveryId);
    if (!row || row.status !== 'pending' || row.attempts >= a.attempt || a.status === 'interrupted' || a.status === 'paused') continue;
    const at = a.finishedAt ?? services.clock.now();
    outcomes.push({
      row,
      attempt: a.attempt,
      status: a.status,
      responseCode: a.responseCode,
      error: a.error,
      startedAt: a.startedAt ?? at,
      finishedAt: at,
      final: a.final === true,
      retryAt: null,
    });
  }
  await writeRowOutcomes(services, ref, outcomes);
}

/** Attempts whose pass died before writing anything: recorded as `interrupted`, never overwritten. */
export async function recordInterrupted(services: Services, ref: EndpointRef, claims: Claim[]): Promise<void> {
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
export async function failWithoutSending(services: Services, ref: EndpointRef, error: string): Promise<number> {
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
      rows.map((row) => ({
        row,
        attempt: row.attempts + 1,
        status: 'failed',
        responseCode: null,
        error,
        startedAt: at,
        finishedAt: at,
        final: true,
        retryAt: null,
      })),
      newId(),
    );
    count += rows.length;
  }
}
