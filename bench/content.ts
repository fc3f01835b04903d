// Public Content API reads: the content list (limit 20) and one entry by slug, against a bare
// Fastify route serving the same bytes, in the same run; warm with the read cache, with the cache
// state re-read on every request, and with the cache off.
// Targets: warm reads ≥ 0.5 of bare Fastify; p99 < 25 ms at 50 connections.
//   npx tsx bench/content.ts     (engines from MONGODB_URI / TEMPORAL_ADDRESS, else local ones)
// Env: BENCH_CONNECTIONS (50), BENCH_DURATION (5 s per round), BENCH_ROUNDS (3), BENCH_ENTRIES (60).
import Fastify from 'fastify';
import { seedPublishedEntries } from './support/seed-entries.ts';
import { startBenchWorld } from './support/world.ts';
import { compare, table, type LoadResult } from './support/load.ts';
import { createRuntime } from '../services/runtime.ts';
import { closeServices } from '../services/core/services.ts';
import { createContext } from '../services/core/context.ts';
import { systemPrincipal } from '../services/core/principal.ts';
import { createSiteResolver } from '../services/tenancy/site-resolver.ts';
import { configurePublicCache } from '../services/public-read/state.ts';
import { buildApp } from '../services/http/app.ts';
import { anonymous } from '../services/core/principal.ts';
import { createDenyAllGate, type AccessGate } from '../services/access/gate.ts';

const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const durationSec = Number(process.env.BENCH_DURATION ?? 5);
const entries = Number(process.env.BENCH_ENTRIES ?? 60);

const world = await startBenchWorld();
const scope = (await createSiteResolver(world.services).resolve('localhost'))!;
const ctx = createContext(world.services, scope, systemPrincipal('benchmark seed'), { id: 'bench', ip: '127.0.0.1' });
await seedPublishedEntries(ctx, entries);

// Three gateways on the same databases, differing only in their public read cache.
const others = await Promise.all([createRuntime(world.config), createRuntime(world.config)]);
configurePublicCache(others[0].services, { stateTtlMs: 0 });
configurePublicCache(others[1].services, { enabled: false });
// Diagnostic: the warm path behind a gate that admits anonymous readers without its per-request
// settings read, to show how much of a public read the content code itself costs.
const noReadGate: AccessGate = { ...createDenyAllGate(world.services), authenticate: async () => anonymous };
const diagnostic = await buildApp({ services: world.services, gate: noReadGate, logger: false });
const apps = [world.app, await others[0].buildApp({ logger: false }), await others[1].buildApp({ logger: false }), diagnostic];
const [warm, perRequest, uncached, gateless] = await Promise.all(apps.map((app) => app.listen({ port: 0, host: '127.0.0.1' })));

const LIST = '/api/v1/content?limit=20';
const ONE = `/api/v1/content/bench-${Math.floor(entries / 2)}`;
const listBody = (await world.app.inject({ method: 'GET', url: LIST })).body;
const oneBody = (await world.app.inject({ method: 'GET', url: ONE })).body;
const bare = Fastify();
bare.get('/list', (_req, reply) => reply.type('application/json; charset=utf-8').send(listBody));
bare.get('/one', (_req, reply) => reply.type('application/json; charset=utf-8').send(oneBody));
const bareAddress = await bare.listen({ port: 0, host: '127.0.0.1' });

try {
  const results = await compare(
    [
      { name: 'bare Fastify, list bytes', url: `${bareAddress}/list` },
      { name: 'list limit 20, cache warm (state TTL 250 ms)', url: `${warm}${LIST}` },
      { name: 'list limit 20, cache warm, state read per request', url: `${perRequest}${LIST}` },
      { name: 'list limit 20, cache off', url: `${uncached}${LIST}` },
      { name: 'list limit 20, cache warm, gate without settings read', url: `${gateless}${LIST}` },
      { name: 'bare Fastify, entry bytes', url: `${bareAddress}/one` },
      { name: 'entry by slug, cache warm (state TTL 250 ms)', url: `${warm}${ONE}` },
      { name: 'entry by slug, cache warm, state read per request', url: `${perRequest}${ONE}` },
      { name: 'entry by slug, cache off', url: `${uncached}${ONE}` },
      { name: 'entry by slug, cache warm, gate without settings read', url: `${gateless}${ONE}` },
    ],
    { connections, durationSec },
  );
  const [bareList, ...listRuns] = results.slice(0, 5) as [LoadResult, ...LoadResult[]];
  const [bareOne, ...oneRuns] = results.slice(5) as [LoadResult, ...LoadResult[]];
  console.log(`\nPublic content reads (${connections} connections, ${durationSec}s per round, median of rounds)`);
  console.log(`list body ${listBody.length} bytes, entry body ${oneBody.length} bytes, ${entries} published entries\n`);
  console.log(table([bareList, ...listRuns], bareList));
  console.log('');
  console.log(table([bareOne, ...oneRuns], bareOne));
  const verdict = (r: LoadResult, base: LoadResult) =>
    `${r.name}: ratio ${(r.requestsPerSec / base.requestsPerSec).toFixed(2)} (target ≥ 0.50), p99 ${r.p99} ms (target < 25)`;
  console.log(`\n${verdict(listRuns[0], bareList)}\n${verdict(oneRuns[0], bareOne)}`);
} finally {
  await bare.close();
  await diagnostic.close();
  for (const [i, other] of others.entries()) {
    await apps[i + 1].close();
    await closeServices(other.services);
  }
  await world.close();
}
