import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureEngines, stopEngines } from '../../scripts/engines.mjs';
import type { World } from '../support/world.ts';
import { adminEndpoints } from '../../services/events/endpoint-ops.ts';
import { call, emit, siteDb, startReceiver, startWebhookWorld, waitFor } from './support.ts';

const createEndpoint = adminEndpoints.create;

// A Temporal dev server of this test's own (other ports, own data dir), so stopping it does not
// disturb the shared one. It reuses the shared MongoDB (same port: engines.mjs leaves it alone).
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhooks-temporal-'));
const temporalPort = 7600 + Math.floor(Math.random() * 300);
const mongoPort = Number(new URL(process.env.MONGODB_URI ?? 'mongodb://127.0.0.1:27117').port || 27017);
const engineOptions = { dataDir, mongoPort, temporalPort, log: () => undefined };

describe('Temporal dev server stopped and restarted with deliveries pending', () => {
  let world: World;
  beforeAll(async () => {
    const engines = await ensureEngines(engineOptions);
    world = await startWebhookWorld({ worker: true, env: { TEMPORAL_ADDRESS: engines.temporalAddress } });
  }, 180_000);
  afterAll(async () => {
    await world?.close();
    await stopEngines({ dataDir });
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('completes them afterwards: runs in backoff survive, events emitted during the outage are drained', async () => {
    let healthy = false;
    const receiver = await startReceiver(() => ({ status: healthy ? 200 : 503 }));
    try {
      const { endpoint } = await call(world, createEndpoint, { name: 'outage', url: receiver.url, events: ['content.updated'] });
      // Before the outage: a delivery whose first attempt fails; its run waits in backoff.
      await emit(world, 'content.updated', { id: 'before', type: 'post', slug: 'a', locale: 'en', status: 'draft', version: 2 });
      await waitFor(async () => receiver.received.length >= 1, 30_000, 'first attempt');

      await stopEngines({ dataDir });
      // During the outage: the emitting operation still succeeds; the delivery is stored pending.
      await emit(world, 'content.updated', { id: 'during', type: 'post', slug: 'b', locale: 'en', status: 'draft', version: 3 });
      const { deliveries, attempts } = await siteDb(world);
      const rows = await deliveries.find({ endpointId: endpoint.id }).toArray();
      expect(rows).toHaveLength(2);
      expect(rows.every((row) => row.status !== 'delivered')).toBe(true);
      await new Promise((r) => setTimeout(r, 2_000));

      healthy = true;
      await ensureEngines(engineOptions);

      const done = await waitFor(async () => {
        const all = await deliveries.find({ endpointId: endpoint.id }).toArray();
        return all.length === 2 && all.every((row) => row.status === 'delivered') && all;
      }, 120_000, 'deliveries after the restart');
      const delivered = new Set(receiver.received.map((r) => JSON.parse(r.body).data.id));
      expect(delivered).toEqual(new Set(['before', 'during']));
      for (const row of done) {
        const history = await attempts.find({ deliveryId: row._id }).sort({ attempt: 1 }).toArray();
        expect(history.length).toBe(row.attempts);
        expect(history.at(-1)?.status).toBe('succeeded');
      }
    } finally {
      await receiver.close();
    }
  }, 240_000);
});
