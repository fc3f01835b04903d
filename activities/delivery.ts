import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Services } from '../services/core/context.ts';
import { newId } from '../services/core/ids.ts';
import { serviceVersion } from '../services/core/version.ts';
import type { Collection } from 'mongodb';
import { eventCollections, type AttemptDoc } from '../services/events/model.ts';
import { secretBinding } from '../services/events/secrets.ts';
import { sendDelivery } from '../services/events/sender.ts';
import { signPayload, WEBHOOK_HEADERS } from '../services/events/signing.ts';
import { TargetRejectedError } from '../services/events/target-guard.ts';
import { DELIVERY_REJECTED } from '../workflows/contracts/delivery.ts';

export interface DeliveryRef {
  dbName: string;
  siteId: string;
  deliveryId: string;
}

/** A failure no retry can fix (target refused, endpoint gone): the workflow gives up at once. */
const rejected = (message: string) => ApplicationFailure.create({ type: DELIVERY_REJECTED, message, nonRetryable: true });

/** Attempt numbers below `attempt` without a row died with their worker; record them as such. */
async function recordInterrupted(
  attempts: Collection<AttemptDoc>,
  base: Pick<AttemptDoc, 'siteId' | 'deliveryId' | 'endpointId' | 'event'>,
  attempt: number,
): Promise<void> {
  const rows = await attempts.find({ siteId: base.siteId, deliveryId: base.deliveryId, attempt: { $lt: attempt } }, { projection: { attempt: 1 } }).toArray();
  const seen = new Set(rows.map((row) => row.attempt));
  for (let number = 1; number < attempt; number++) {
    if (seen.has(number)) continue;
    await attempts.updateOne(
      { siteId: base.siteId, deliveryId: base.deliveryId, attempt: number },
      {
        $setOnInsert: {
          _id: newId(),
          endpointId: base.endpointId,
          event: base.event,
          status: 'interrupted',
          responseCode: null,
          error: 'the worker stopped during this attempt',
          startedAt: null,
          finishedAt: null,
          durationMs: null,
        },
      },
      { upsert: true },
    );
  }
}

export function createDeliveryActivities(services: Services) {
  const settings = services.webhooks;

  return {
    /**
     * One HTTP attempt, written to the history once it has an outcome (one write per attempt).
     * Temporal's attempt number is the history's: a number with no row belongs to an attempt that
     * a dying worker cut short, and is recorded as `interrupted` by the attempt that follows.
     */
    async attemptDelivery(ref: DeliveryRef): Promise<void> {
      const activity = Context.current();
      const attempt = activity.info.attempt;
      const { deliveries, endpoints, attempts } = eventCollections(services.workspaceDb({ dbName: ref.dbName }));
      const delivery = await deliveries.findOne({ _id: ref.deliveryId, siteId: ref.siteId });
      if (!delivery) throw rejected('delivery not found');
      if (delivery.status === 'delivered') return;

      const startedAt = services.clock.now();
      const key = { siteId: ref.siteId, deliveryId: ref.deliveryId };
      if (attempt > 1) await recordInterrupted(attempts, { ...key, endpointId: delivery.endpointId, event: delivery.event }, attempt);
      const finish = async (result: Pick<AttemptDoc, 'status' | 'responseCode' | 'error'> & { durationMs?: number }) => {
        const finishedAt = services.clock.now();
        const durationMs = result.durationMs ?? finishedAt.getTime() - startedAt.getTime();
        await attempts.updateOne(
          { ...key, attempt },
          { $set: { endpointId: delivery.endpointId, event: delivery.event, ...result, startedAt, finishedAt, durationMs }, $setOnInsert: { _id: newId() } },
          { upsert: true },
        );
        const delivered = result.status === 'succeeded';
        await deliveries.updateOne(
          { _id: ref.deliveryId, siteId: ref.siteId, status: { $ne: 'delivered' } },
          {
            $set: {
              attempts: attempt,
              responseCode: result.responseCode,
              error: result.error,
              updatedAt: finishedAt,
              ...(delivered ? { status: 'delivered' as const, finishedAt } : {}),
            },
          },
        );
      };

      const endpoint = await endpoints.findOne({ _id: delivery.endpointId, siteId: ref.siteId });
      if (!endpoint || !endpoint.active) {
        const error = endpoint ? 'endpoint is inactive' : 'endpoint was deleted';
        await finish({ status: 'failed', responseCode: null, error });
        throw rejected(error);
      }
      let target;
      try {
        // Checked again now: the name may resolve elsewhere than when the endpoint was saved.
        target = await settings.guard.vet(endpoint.url);
      } catch (error) {
        if (!(error instanceof TargetRejectedError)) throw error;
        if (error.transient) {
          await finish({ status: 'failed', responseCode: null, error: error.message });
          throw ApplicationFailure.create({ type: 'DeliveryAttemptFailed', message: error.message });
        }
        await finish({ status: 'blocked', responseCode: null, error: error.message });
        throw rejected(error.message);
      }

      const secret = settings.secrets.open(endpoint.secretEnc, secretBinding(ref.siteId, endpoint._id));
      const timestamp = Math.floor(services.clock.now().getTime() / 1000);
      const headers = {
        [WEBHOOK_HEADERS.signature]: signPayload(secret, timestamp, delivery.body),
        [WEBHOOK_HEADERS.timestamp]: String(timestamp),
        [WEBHOOK_HEADERS.delivery]: delivery._id,
        [WEBHOOK_HEADERS.event]: delivery.event,
        [WEBHOOK_HEADERS.attempt]: String(attempt),
        'user-agent': `cwb-webhooks/${serviceVersion}`,
      };
      const result = await sendDelivery(target, delivery.body, headers, {
        timeoutMs: settings.attemptTimeoutMs,
        onWait: () => activity.heartbeat(),
        waitEveryMs: Math.max(200, Math.min(1000, settings.heartbeatTimeoutMs / 3)),
      });
      await finish({ status: result.outcome, responseCode: result.responseCode, error: result.error, durationMs: result.durationMs });
      if (result.outcome !== 'succeeded') {
        throw ApplicationFailure.create({ type: 'DeliveryAttemptFailed', message: result.error ?? 'delivery failed' });
      }
    },

    /** Final state once every attempt failed (or the target was refused). */
    async markDeliveryFailed(ref: DeliveryRef & { error: string }): Promise<void> {
      const now = services.clock.now();
      const { deliveries } = eventCollections(services.workspaceDb({ dbName: ref.dbName }));
      await deliveries.updateOne(
        { _id: ref.deliveryId, siteId: ref.siteId, status: { $ne: 'delivered' } },
        { $set: { status: 'failed', error: ref.error, finishedAt: now, updatedAt: now } },
      );
    },
  };
}

export type DeliveryActivities = ReturnType<typeof createDeliveryActivities>;
