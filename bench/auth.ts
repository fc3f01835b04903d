// Cost of authentication, the live re-check and rate limiting: an authenticated Management API GET
// against the same gateway's anonymous public route serving the same bytes, in one run.
// Target: ratio ≥ 0.75.       npx tsx bench/auth.ts
// (engines from MONGODB_URI / TEMPORAL_ADDRESS, else the local ones; BENCH_ROUNDS, BENCH_DURATION, BENCH_CONNECTIONS)
import Fastify from 'fastify';
import autocannon from 'autocannon';
import { resolve } from 'node:path';
import { ensureEngines } from '../scripts/engines.mjs';
import { z } from 'zod';
import { defineOperation } from '../services/core/operation.ts';
import { createContext } from '../services/core/context.ts';
import { features } from '../services/features.ts';
import { createSiteResolver } from '../services/tenancy/site-resolver.ts';
import { systemPrincipal } from '../services/core/principal.ts';
import { findUserByEmail } from '../services/access/users.ts';
import { loadUserAccess } from '../services/access/user-access.ts';
import { createKey } from '../services/access/keys.ts';
import { writeKeySettings } from '../services/access/site-settings-store.ts';
import { startBenchWorld } from './support/world.ts';
import { compare, table } from './support/load.ts';

const payload = { items: Array.from({ length: 10 }, (_, i) => ({ id: `id-${i}`, title: `Item ${i}`, slug: `item-${i}` })) };
const Output = z.object({ items: z.array(z.object({ id: z.string(), title: z.string(), slug: z.string() })) });
const same = (surface: 'public' | 'manage') =>
  defineOperation({
    id: `bench.same.${surface}`,
    surface,
    method: 'GET',
    path: '/bench-same',
    summary: 'Fixed payload (benchmark only)',
    requires: surface === 'public' ? 'public' : 'content:read',
    input: z.object({}),
    output: Output,
    handler: async () => payload,
  });

// Command monitoring (to count database round trips per request) must be on when the client connects.
if (!process.env.MONGODB_URI || !process.env.TEMPORAL_ADDRESS) {
  const engines = await ensureEngines({ dataDir: resolve(process.env.DATA_DIR ?? '.data'), log: () => undefined });
  process.env.MONGODB_URI ??= engines.mongoUri;
  process.env.TEMPORAL_ADDRESS ??= engines.temporalAddress;
}
if (!/monitorCommands/.test(process.env.MONGODB_URI!)) {
  process.env.MONGODB_URI += `${process.env.MONGODB_URI!.includes('?') ? '&' : process.env.MONGODB_URI!.endsWith('/') ? '?' : '/?'}monitorCommands=true`;
}

const bare = Fastify();
bare.get('/bench-same', async () => payload);
const bareAddress = await bare.listen({ port: 0, host: '127.0.0.1' });

const world = await startBenchWorld({ features: [...features, { name: 'bench', operations: [same('public'), same('manage')] }] });
const scope = (await createSiteResolver(world.services).resolve('localhost'))!;
const ctx = createContext(world.services, scope, systemPrincipal('benchmark setup'), { id: 'bench', ip: '127.0.0.1' });
const owner = (await findUserByEmail(ctx, world.admin.email))!;
const access = (await loadUserAccess(ctx.db, scope.site._id, owner._id))!;
// Budgets far above what the run sends, so every request does the full limiter work and passes.
const { key } = await createKey(
  ctx,
  { userId: owner._id, capabilities: access.capabilities },
  {
    name: 'bench',
    capabilities: ['content:read'],
    rateLimitPerMin: 100_000_000,
  },
);
await writeKeySettings(ctx.db, scope.site._id, { enabled: true, defaultRateLimitPerMin: 100_000_000, allowedOrigins: [] }, new Date());

const gatewayAddress = await world.app.listen({ port: 0, host: '127.0.0.1' });
let commandCount = 0;
world.services.mongo.on('commandStarted', () => void commandCount++);

async function commandsPerRequest(targets: { name: string; url: string; headers?: Record<string, string> }[]) {
  const results = [];
  for (const target of targets) {
    const amount = 3000;
    await autocannon({ url: target.url, headers: target.headers, connections, amount: 500 });
    const before = commandCount;
    await autocannon({ url: target.url, headers: target.headers, connections, amount });
    results.push({ name: target.name, perRequest: (commandCount - before) / amount });
  }
  return results;
}
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
const durationSec = Number(process.env.BENCH_DURATION ?? 5);

try {
  const check = await fetch(`${gatewayAddress}/api/manage/v1/bench-same`, { headers: { authorization: `Bearer ${key}` } });
  if (check.status !== 200 || (await check.text()) !== JSON.stringify(payload)) throw new Error(`manage route answered ${check.status}`);
  // Noise-free structure of the cost: database commands per request on each route, same load.
  const commands = await commandsPerRequest([
    { name: 'public', url: `${gatewayAddress}/api/v1/bench-same` },
    { name: 'manage', url: `${gatewayAddress}/api/manage/v1/bench-same`, headers: { authorization: `Bearer ${key}` } },
  ]);
  const [baseline, publicRoute, manageRoute] = await compare(
    [
      { name: 'bare Fastify route (context)', url: `${bareAddress}/bench-same` },
      { name: 'gateway /api/v1 public (anonymous)', url: `${gatewayAddress}/api/v1/bench-same` },
      { name: 'gateway /api/manage/v1 (bearer key)', url: `${gatewayAddress}/api/manage/v1/bench-same`, headers: { authorization: `Bearer ${key}` } },
    ],
    { connections, durationSec },
  );
  console.log(`\nAuthentication overhead (${connections} connections, ${durationSec}s per round, median of rounds)\n`);
  console.log(table([baseline, publicRoute, manageRoute], publicRoute));
  console.log(`\nratio manage/public ${(manageRoute.requestsPerSec / publicRoute.requestsPerSec).toFixed(2)} (target ≥ 0.75)`);
  console.log(`database commands per request (${connections} connections): ${commands.map((c) => `${c.name} ${c.perRequest.toFixed(2)}`).join(', ')}`);
} finally {
  await bare.close();
  await world.close();
}
