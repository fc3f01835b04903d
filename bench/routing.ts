// Routing and registry overhead: a bare Fastify JSON route against the gateway's tenant-resolved
// public route serving the same bytes, in the same run. Target: ratio ≥ 0.9.
//   npx tsx bench/routing.ts        (engines from MONGODB_URI / TEMPORAL_ADDRESS, else local ones)
import Fastify from 'fastify';
import { z } from 'zod';
import { defineOperation } from '../services/core/operation.ts';
import { features } from '../services/features.ts';
import { buildApp } from '../services/http/app.ts';
import { anonymous } from '../services/core/principal.ts';
import { startBenchWorld } from './support/world.ts';
import { compare, table } from './support/load.ts';
import { createDenyAllGate } from '../services/access/gate.ts';

const payload = { items: Array.from({ length: 10 }, (_, i) => ({ id: `id-${i}`, title: `Item ${i}`, slug: `item-${i}` })) };

const echo = defineOperation({
  id: 'bench.echo',
  surface: 'public',
  method: 'GET',
  path: '/bench-echo',
  summary: 'Fixed payload (benchmark only)',
  requires: 'public',
  input: z.object({}),
  output: z.object({ items: z.array(z.object({ id: z.string(), title: z.string(), slug: z.string() })) }),
  async handler() {
    return payload;
  },
});

const bare = Fastify();
bare.get('/bench-echo', async () => payload);
const bareAddress = await bare.listen({ port: 0, host: '127.0.0.1' });

const world = await startBenchWorld({ features: [...features, { name: 'bench', operations: [echo] }] });
const gatewayAddress = await world.app.listen({ port: 0, host: '127.0.0.1' });
// Diagnostic: the same gateway with a gate that admits anonymous readers without reading the
// Public API switch, to separate the registry's own cost from that per-request database read.
const stubbed = await buildApp({
  services: world.services,
  gate: { ...createDenyAllGate(world.services), authenticate: async () => anonymous },
  logger: false,
});
const stubbedAddress = await stubbed.listen({ port: 0, host: '127.0.0.1' });
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
const durationSec = Number(process.env.BENCH_DURATION ?? 5);

try {
  const [baseline, gateway, diagnostic] = await compare(
    [
      { name: 'bare Fastify route', url: `${bareAddress}/bench-echo` },
      { name: 'gateway /api/v1 (tenant + registry)', url: `${gatewayAddress}/api/v1/bench-echo` },
      { name: 'diagnostic: gateway without the switch read', url: `${stubbedAddress}/api/v1/bench-echo` },
    ],
    { connections, durationSec },
  );
  console.log(`\nRouting overhead (${connections} connections, ${durationSec}s per round, median of rounds)\n`);
  console.log(table([baseline, gateway, diagnostic], baseline));
  console.log(`\nratio ${(gateway.requestsPerSec / baseline.requestsPerSec).toFixed(2)} (target ≥ 0.90)`);
} finally {
  await bare.close();
  await stubbed.close();
  await world.close();
}
