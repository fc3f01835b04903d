import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureEngines, stopEngines } from '../../scripts/engines.mjs';
import { startWorld, type World } from '../support/world.ts';
import { createApiKey } from '../support/access.ts';
import { ALL_CAPABILITIES } from '../../services/core/capabilities.ts';
import { bearer } from './world-helpers.ts';
import { call, startGateway, stopGateways, type Gateway } from './gateway-fleet.ts';
import { eventually } from '../support/polling.ts';

// The database engine itself restarted under two gateway processes that hold access state in
// memory (docs/access.md, "State held by each gateway"). A MongoDB engine of this test's own (own
// port and data folder), so stopping it disturbs nobody. While it is down no gateway may answer
// from memory once its lease is stale but its cached public answers (nothing can be written then);
// after it is back, a switch flipped through gateway 1 — even before gateway 2's feed has
// reconnected — is seen by gateway 2 as soon as it reaches the database again.
const LEASE_MS = 1500;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'feed-mongo-'));
const mongoPort = 27300 + Math.floor(Math.random() * 600);
const engineOptions = { dataDir, mongoPort, temporal: false, log: () => undefined };

let world: World;
const children: ChildProcess[] = [];
let g1: Gateway;
let g2: Gateway;
let adminKey: string;

beforeAll(async () => {
  const engines = await ensureEngines(engineOptions);
  world = await startWorld({ env: { MONGODB_URI: engines.mongoUri, STATE_LEASE_MS: String(LEASE_MS) } });
  ({ key: adminKey } = await createApiKey(world, { capabilities: [...ALL_CAPABILITIES] }));
  [g1, g2] = await Promise.all([startGateway(world, children), startGateway(world, children)]);
}, 300_000);

afterAll(async () => {
  await stopGateways(children);
  await world?.close().catch(() => undefined);
  await stopEngines({ dataDir, log: () => undefined });
  fs.rmSync(dataDir, { recursive: true, force: true });
}, 120_000);

const admin = () => bearer(adminKey);
const trusted = async (gateway: Gateway) => {
  const answer = await call(gateway, 'GET', '/api/manage/v1/diagnostics', { headers: admin() }).catch(() => null);
  return answer?.status === 200 && (JSON.parse(answer.body) as { runtime: { stateFeed: { trusted: boolean } } }).runtime.stateFeed.trusted;
};
const publicList = (gateway: Gateway) => call(gateway, 'GET', '/api/v1/content?limit=1');
const setPublic = (gateway: Gateway, on: boolean) =>
  call(gateway, 'PATCH', '/api/manage/v1/settings', { headers: admin(), body: { api: { publicEnabled: on } } });

describe('state held by each gateway, across a database engine restart', () => {
  it(
    'no stale answer: nothing from memory while the engine is down, and a switch flipped right after the restart is seen by the next request',
    { timeout: 300_000 },
    async () => {
      for (let round = 0; round < 2; round++) {
        await eventually(() => trusted(g2), 'gateway 2 trusted', 20_000);
        // Warm: gateway 2 answers from memory (the cache-hit lane included).
        for (let i = 0; i < 3; i++) expect((await publicList(g2)).status).toBe(200);

        await stopEngines({ dataDir, log: () => undefined });
        // Past the lease, gateway 2 no longer vouches for its memory: a keyed read goes to the
        // (absent) database and fails rather than answering from what it held. Its cached public
        // answer is still served: nothing can be written while the database is missing
        // (docs/production.md, "Degrade, never hang").
        await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 500));
        expect((await call(g2, 'GET', '/api/manage/v1/content?limit=1', { headers: admin() })).status).toBeGreaterThanOrEqual(500);
        expect((await publicList(g2)).status).toBe(200);

        await ensureEngines(engineOptions);
        // Right after the restart: a switch flipped through gateway 1 is seen by gateway 2 as soon
        // as it reaches the database again (it probes every second while it is missing), before its
        // feed is back: the write returned when gateway 2's lease had lapsed.
        expect((await setPublic(g1, false)).status).toBe(200);
        await eventually(async () => (await publicList(g2)).status === 404, 'the switch seen by gateway 2', 3000, 20);
        expect((await setPublic(g1, true)).status).toBe(200);
        expect((await publicList(g2)).status).toBe(200);

        // Back in memory on its own, and still exact there.
        await eventually(() => trusted(g2), 'gateway 2 trusted after the restart', 20_000);
        for (let i = 0; i < 2; i++) expect((await publicList(g2)).status).toBe(200);
        expect((await setPublic(g1, false)).status).toBe(200);
        expect((await publicList(g2)).status).toBe(404);
        expect((await setPublic(g1, true)).status).toBe(200);
        expect((await publicList(g2)).status).toBe(200);
      }
    },
  );
});
