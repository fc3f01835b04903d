import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureEngines, stopEngines } from '../../scripts/engines.mjs';
import type { World } from '../support/world.ts';
import { adminEndpoints } from '../../services/events/endpoint-ops.ts';
import { call, emit, siteDb, startReceiver, startWebhookWorld } from './support.ts';
import { eventually } from '../support/polling.ts';

const createEndpoint = adminEndpoints.create;

// A Temporal dev server of this test's own (other ports, own data dir), so stopping it does not
// disturb the shared one. It reuses the shared MongoDB (`mongo: false`: started by someone else).
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhooks-temporal-'));
const temporalPort = 7600 + Math.floor(Math.random() * 300);
const engineOptions = { dataDir, temporalPort, mongo: false, log: () => undefined };

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

  it('loses nothing across the restart mid-burst: actors waiting on a retry timer resume, what was emitted during the outage is drained', async () => {
    let healthy = false;
    const accepted: string[] = []; // ids answered 200, counted by the receiver itself
    const receiver = await startReceiver((req) => {
      if (healthy) accepted.push(String(req.headers['x-service-delivery']));
      return { status: healthy ? 200 : 503 };
    });
    try {
      const { endpoint } = await call(world, createEndpoint, { name: 'outage', url: receiver.url, events: ['content.updated'] });
      // Before the outage: a burst whose first attempts fail; the actor waits on its retry timer.
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          emit(world, 'content.updated', { id: `before-${i}`, type: 'post', slug: `a${i}`, locale: 'en', status: 'draft', version: 2 }),
        ),
      );
      await eventually(async () => receiver.received.length >= 10, 'first attempts', 30_000);

      await stopEngines({ dataDir });
      // During the outage: the emitting operations still succeed; the deliveries are stored pending.
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          emit(world, 'content.updated', { id: `during-${i}`, type: 'post', slug: `b${i}`, locale: 'en', status: 'draft', version: 3 }),
        ),
      );
      const { deliveries, historyOf } = await siteDb(world);
      const rows = await deliveries.find({ endpointId: endpoint.id }).toArray();
      expect(rows).toHaveLength(20);
      expect(rows.every((row) => row.status !== 'delivered')).toBe(true);
      await new Promise((r) => setTimeout(r, 2_000));

      healthy = true;
      await ensureEngines(engineOptions);

      const done = await eventually(
        async () => {
          const all = await deliveries.find({ endpointId: endpoint.id }).toArray();
          return all.length === 20 && all.every((row) => row.status === 'delivered') && all;
        },
        'deliveries after the restart',
        120_000,
      );
      // The receiver's own count: every stored id was accepted (a pass cut off by the outage may
      // send one again after it: always with the same delivery id, so the set is what counts).
      expect(new Set(accepted)).toEqual(new Set(done.map((row) => row._id)));
      const data = new Set(receiver.received.map((r) => JSON.parse(r.body).data.id));
      expect(data.size).toBe(20);
      for (const row of done) {
        const history = await historyOf(row._id);
        expect(history.length).toBe(row.attempts);
        expect(history.at(-1)?.status).toBe('succeeded');
      }
    } finally {
      await receiver.close();
    }
  }, 240_000);
});
