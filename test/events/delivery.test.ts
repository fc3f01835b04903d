import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/world.ts';
import { manageEndpoints, adminEndpoints } from '../../services/events/endpoint-ops.ts';
import { deliveryHistoryOp, redeliverOp } from '../../services/events/delivery-ops.ts';
import { verifyWebhookSignature } from '../../services/events/verify.ts';
import { createEntryOp } from '../../services/content/entries-write-ops.ts';
import { publishEntryOp } from '../../services/content/entries-publish-ops.ts';
import { invokeOperation } from '../../services/core/operation.ts';
import { adminPrincipal, call, contextFor, emit, keyPrincipal, siteDb, storeKey, startReceiver, startWebhookWorld } from './support.ts';
import { eventually } from '../support/polling.ts';

const createKeyEndpoint = manageEndpoints.create;
const createEndpoint = adminEndpoints.create;

describe('webhook deliveries on Temporal', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWebhookWorld({ worker: true });
  });
  afterAll(() => world?.close());

  it('signs each delivery so an independent implementation verifies it; the shipped verifier refuses replays', async () => {
    const receiver = await startReceiver();
    try {
      const { secret, endpoint } = await call(world, createEndpoint, { name: 'signed', url: receiver.url, events: ['content.published'] });
      expect(secret).toMatch(/^whsec_/);
      await emit(world, 'content.published', { id: 'e1', type: 'post', slug: 'hello', locale: 'en', title: 'Hello', version: 2 });
      const [got] = await eventually(async () => receiver.received.length >= 1 && receiver.received, 'receipt', 20_000);

      const timestamp = String(got.headers['x-service-timestamp']);
      const signature = String(got.headers['x-service-signature']);
      // Independent check with node's crypto, not the service's code.
      const expected = `sha256=${createHmac('sha256', secret).update(`${timestamp}.${got.body}`).digest('hex')}`;
      expect(timingSafeEqual(Buffer.from(signature), Buffer.from(expected))).toBe(true);
      expect(Math.abs(Date.now() / 1000 - Number(timestamp))).toBeLessThan(30);

      const body = JSON.parse(got.body);
      expect(body).toMatchObject({ event: 'content.published', data: { id: 'e1', slug: 'hello' } });
      expect(got.headers['x-service-event']).toBe('content.published');
      expect(got.headers['x-service-attempt']).toBe('1');
      const { deliveries } = await siteDb(world);
      const row = await deliveries.findOne({ _id: String(got.headers['x-service-delivery']) });
      expect(row?.endpointId).toBe(endpoint.id);
      await eventually(async () => (await deliveries.findOne({ _id: row!._id }))?.status === 'delivered', 'delivered', 10_000);

      // The shipped verifier: accepts the fresh request, refuses it replayed six minutes later,
      // a tampered body and a wrong secret.
      const fresh = { secret, body: got.body, timestamp, signature };
      expect(verifyWebhookSignature(fresh)).toBe(true);
      expect(verifyWebhookSignature({ ...fresh, now: Number(timestamp) * 1000 + 6 * 60_000 })).toBe(false);
      expect(verifyWebhookSignature({ ...fresh, body: `${got.body} ` })).toBe(false);
      expect(verifyWebhookSignature({ ...fresh, secret: 'whsec_other' })).toBe(false);
      // An attacker re-signing an old body with a fresh timestamp needs the secret.
      expect(verifyWebhookSignature({ ...fresh, timestamp: String(Number(timestamp) + 1) })).toBe(false);
    } finally {
      await receiver.close();
    }
  });

  it('retries a receiver failing three times: four attempts, growing backoff, then delivered', async () => {
    const receiver = await startReceiver((_req, index) => ({ status: index < 3 ? 503 : 204 }));
    try {
      const { endpoint } = await call(world, createEndpoint, { name: 'flaky', url: receiver.url, events: ['media.uploaded'] });
      await emit(world, 'media.uploaded', { id: 'm1', filename: 'a.png', mimeType: 'image/png', size: 10, url: '/a.png' });
      const { deliveries, historyOf } = await siteDb(world);
      const delivery = await eventually(
        async () => (await deliveries.findOne({ endpointId: endpoint.id, status: { $in: ['delivered', 'failed'] } })) ?? undefined,
        'flaky delivery',
        30_000,
      );
      expect(delivery.status).toBe('delivered');
      expect(delivery.attempts).toBe(4);
      const rows = await historyOf(delivery._id);
      expect(rows.map((r) => [r.attempt, r.status, r.responseCode])).toEqual([
        [1, 'failed', 503],
        [2, 'failed', 503],
        [3, 'failed', 503],
        [4, 'succeeded', 204],
      ]);
      const gaps = receiver.received.slice(1).map((r, i) => r.at - receiver.received[i].at);
      expect(gaps).toHaveLength(3);
      // Test settings: 1 s, 2 s, 4 s of backoff. Each gap is at least its (doubling) backoff; a
      // loaded machine can only add time on top, so these lower bounds are what is asserted.
      expect(gaps[0]).toBeGreaterThanOrEqual(900);
      expect(gaps[1]).toBeGreaterThanOrEqual(1_900);
      expect(gaps[2]).toBeGreaterThanOrEqual(3_900);
      expect(new Set(receiver.received.map((r) => r.headers['x-service-delivery']))).toEqual(new Set([delivery._id]));

      // The administrators' history shows the attempts, newest first.
      const history = await call(world, deliveryHistoryOp, {});
      const mine = history.data.filter((h) => h.deliveryId === delivery._id);
      expect(mine.map((h) => h.attempt)).toEqual([4, 3, 2, 1]);
      expect(mine[3]).toMatchObject({ event: 'media.uploaded', status: 'failed', responseCode: 503, error: 'HTTP 503' });
    } finally {
      await receiver.close();
    }
  });

  it('gives up after six attempts against a receiver that always fails, and a redelivery is a new delivery', async () => {
    let healthy = false;
    const receiver = await startReceiver(() => ({ status: healthy ? 200 : 500 }));
    try {
      const { endpoint } = await call(world, createEndpoint, { name: 'broken', url: receiver.url, events: ['user.deleted'] });
      await emit(world, 'user.deleted', { id: 'u1' });
      const { deliveries, historyOf } = await siteDb(world);
      const delivery = await eventually(
        async () => (await deliveries.findOne({ endpointId: endpoint.id, status: { $in: ['delivered', 'failed'] } })) ?? undefined,
        'failed delivery',
        40_000,
      );
      expect(delivery).toMatchObject({ status: 'failed', attempts: 6, responseCode: 500 });
      expect(await historyOf(delivery._id)).toHaveLength(6);
      expect(receiver.received).toHaveLength(6);

      healthy = true;
      const result = await call(world, redeliverOp, { id: delivery._id });
      expect(result.delivery.id).not.toBe(delivery._id);
      const copy = await eventually(
        async () => {
          const row = await deliveries.findOne({ _id: result.delivery.id });
          return row?.status === 'delivered' && row;
        },
        'redelivery',
        20_000,
      );
      expect(copy).toMatchObject({ redeliveryOf: delivery._id, body: delivery.body, attempts: 1 });
      expect(receiver.received.at(-1)?.headers['x-service-delivery']).toBe(copy._id);
      expect(receiver.received.at(-1)?.body).toBe(delivery.body);
      // The original keeps its own outcome.
      expect((await deliveries.findOne({ _id: delivery._id }))?.status).toBe('failed');
    } finally {
      await receiver.close();
    }
  }, 90_000);

  it('counts a receiver that does not answer in time as a failed attempt (timeout), then retries', async () => {
    const receiver = await startReceiver((_req, index) => ({ delayMs: index === 0 ? 5_000 : 0 }));
    try {
      const { endpoint } = await call(world, createEndpoint, { name: 'slow-once', url: receiver.url, events: ['auth.login'] });
      await emit(world, 'auth.login', { userId: 'u', method: 'password' });
      const { deliveries, historyOf } = await siteDb(world);
      const delivery = await eventually(
        async () => (await deliveries.findOne({ endpointId: endpoint.id, status: 'delivered' })) ?? undefined,
        'delivered',
        30_000,
      );
      const rows = await historyOf(delivery._id);
      expect(rows.map((r) => r.status)).toEqual(['timeout', 'succeeded']);
      expect(rows[0].responseCode).toBeNull();
    } finally {
      await receiver.close();
    }
  });

  it('gives each endpoint its own delivery: a slow endpoint delays no other', async () => {
    const slow = await startReceiver(() => ({ delayMs: 2_500 }));
    const fast = await startReceiver();
    const other = await startReceiver();
    try {
      await call(world, createEndpoint, { name: 'slow', url: slow.url, events: ['theme.activated'] });
      await call(world, createEndpoint, { name: 'fast', url: fast.url, events: ['theme.activated'] });
      // A key's endpoint receives the event as well: subscription is per site, not per owner.
      await storeKey(world, 'k1');
      await call(world, createKeyEndpoint, { name: 'other', url: other.url, events: ['theme.activated', 'theme.installed'] }, keyPrincipal('k1'));
      const emittedAt = Date.now();
      await emit(world, 'theme.activated', { id: 'dark', previous: 'light' });
      const { deliveries } = await siteDb(world);
      const byStatus = async () => {
        const rows = await deliveries.find({ event: 'theme.activated' }).toArray();
        return new Map(rows.map((row) => [row.endpointId, row.status]));
      };
      const endpointIds = await (async () => {
        const { endpoints } = await siteDb(world);
        const rows = await endpoints.find({ name: { $in: ['slow', 'fast', 'other'] } }).toArray();
        return Object.fromEntries(rows.map((row) => [row.name, row._id]));
      })();
      const fastDone = await eventually(
        async () => {
          const status = await byStatus();
          return status.get(endpointIds.fast) === 'delivered' && status.get(endpointIds.other) === 'delivered' && status;
        },
        'fast deliveries',
        10_000,
      );
      expect(fast.received[0].at - emittedAt).toBeLessThan(2_000);
      // The slow endpoint is still holding its answer while the others are done.
      expect(fastDone.get(endpointIds.slow)).not.toBe('delivered');
      await eventually(async () => (await byStatus()).get(endpointIds.slow) === 'delivered', 'slow delivery', 10_000);
      const ids = new Set([fast, other, slow].map((r) => r.received[0].headers['x-service-delivery']));
      expect(ids.size).toBe(3);
      const bodies = new Set([fast, other, slow].map((r) => JSON.parse(r.received[0].body).id));
      expect(bodies.size).toBe(1); // one event, three deliveries
    } finally {
      await Promise.all([slow.close(), fast.close(), other.close()]);
    }
  });

  it('does not send to inactive endpoints, nor events an endpoint did not subscribe to', async () => {
    const receiver = await startReceiver();
    try {
      const { endpoint } = await call(world, createEndpoint, { name: 'off', url: receiver.url, events: ['core.updated'], active: false });
      await emit(world, 'core.updated', { from: '0.1.0', to: '0.2.0' });
      await emit(world, 'plugin.activated', { id: 'seo' });
      const { deliveries } = await siteDb(world);
      await new Promise((r) => setTimeout(r, 1000));
      expect(await deliveries.countDocuments({ endpointId: endpoint.id })).toBe(0);
      expect(receiver.received).toHaveLength(0);
    } finally {
      await receiver.close();
    }
  });

  it('sees an endpoint saved, switched off, resubscribed or deleted between two emits (publishers hold the endpoints while the feed vouches)', async () => {
    const { deliveries } = await siteDb(world);
    const rows = async (endpointId: string) => deliveries.countDocuments({ endpointId, event: 'theme.installed' });
    // The world is a gateway: its feed is trusted, so the publisher answers from what it holds.
    await eventually(async () => world.services.changeFeed.trusted(), 'a trusted feed', 10_000);
    const first = await call(world, createEndpoint, { name: 'held 1', url: 'http://127.0.0.1:9/hook', events: ['theme.installed'], active: true });
    await emit(world, 'theme.installed', { id: 'a' });
    expect(await rows(first.endpoint.id)).toBe(1);
    const second = await call(world, createEndpoint, { name: 'held 2', url: 'http://127.0.0.1:9/hook', events: ['theme.installed'] });
    await emit(world, 'theme.installed', { id: 'b' });
    expect([await rows(first.endpoint.id), await rows(second.endpoint.id)]).toEqual([2, 1]);
    await call(world, adminEndpoints.update, { id: first.endpoint.id, active: false });
    await call(world, adminEndpoints.update, { id: second.endpoint.id, events: ['core.updated'] });
    await emit(world, 'theme.installed', { id: 'c' });
    expect([await rows(first.endpoint.id), await rows(second.endpoint.id)]).toEqual([2, 1]);
    await call(world, adminEndpoints.update, { id: first.endpoint.id, active: true });
    await call(world, adminEndpoints.update, { id: second.endpoint.id, events: ['theme.installed'] });
    await emit(world, 'theme.installed', { id: 'd' });
    expect([await rows(first.endpoint.id), await rows(second.endpoint.id)]).toEqual([3, 2]);
    await call(world, adminEndpoints.remove, { id: first.endpoint.id });
    await call(world, adminEndpoints.remove, { id: second.endpoint.id });
    await emit(world, 'theme.installed', { id: 'e' });
    expect([await rows(first.endpoint.id), await rows(second.endpoint.id)]).toEqual([3, 2]);
  });

  it('lets the webhook.payload filter reshape the body; a body over 256 KB is recorded as failed, not sent', async () => {
    const receiver = await startReceiver();
    const remove = world.services.hooks.addFilter<Record<string, unknown>>('webhook.payload', (payload, args) =>
      args.event === 'plugin.installed' ? { ...payload, reshaped: true } : payload,
    );
    try {
      const { endpoint } = await call(world, createEndpoint, { name: 'shaped', url: receiver.url, events: ['plugin.installed', 'plugin.uninstalled'] });
      await emit(world, 'plugin.installed', { id: 'seo', name: 'SEO', version: '1.0.0' });
      await eventually(async () => receiver.received.length === 1, 'receipt', 10_000);
      expect(JSON.parse(receiver.received[0].body)).toMatchObject({ reshaped: true, event: 'plugin.installed' });

      await emit(world, 'plugin.uninstalled', { id: 'seo', blob: 'x'.repeat(300 * 1024) });
      const { deliveries } = await siteDb(world);
      const big = await eventually(async () => (await deliveries.findOne({ endpointId: endpoint.id, event: 'plugin.uninstalled' })) ?? undefined, 'row', 5_000);
      expect(big.status).toBe('failed');
      expect(big.error).toMatch(/256|262144/);
      await new Promise((r) => setTimeout(r, 500));
      expect(receiver.received).toHaveLength(1);
    } finally {
      remove();
      await receiver.close();
    }
  });

  it('delivers what real operations emit (content create and publish)', async () => {
    const receiver = await startReceiver();
    try {
      await call(world, createEndpoint, { name: 'content', url: receiver.url, events: ['content.created', 'content.published'] });
      const ctx = await contextFor(world, adminPrincipal());
      const entry = (await invokeOperation(createEntryOp, ctx, { title: 'Webhook entry', blocks: { version: 1, blocks: [] } })) as { id: string };
      await invokeOperation(publishEntryOp, ctx, { id: entry.id });
      await eventually(async () => receiver.received.length >= 2, 'two receipts', 20_000);
      const got = receiver.received.map((r) => JSON.parse(r.body)).sort((a, b) => a.event.localeCompare(b.event));
      expect(got.map((b) => [b.event, b.data.id])).toEqual([
        ['content.created', entry.id],
        ['content.published', entry.id],
      ]);
      expect(got[1].data).toMatchObject({ status: 'published', slug: expect.any(String) });
    } finally {
      await receiver.close();
    }
  });

  it('never fails the emitting operation, even when publishing breaks', async () => {
    const remove = world.services.hooks.addFilter('webhook.payload', () => {
      throw new Error('plugin bug');
    });
    const receiver = await startReceiver();
    try {
      await call(world, createEndpoint, { name: 'x', url: receiver.url, events: ['auth.logout'] });
      await expect(emit(world, 'auth.logout', { userId: 'u' })).resolves.toBeUndefined();
    } finally {
      remove();
      await receiver.close();
    }
  });
});
