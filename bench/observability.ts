// What metrics and traces cost (issue 26): pairs of gateway processes (services/gateway.ts, the real
// entry) on the same databases, in each pair one with both off, one with its metrics listener
// (METRICS_PORT) and tracing to an OTLP/HTTP collector on loopback (this process: it takes and drops
// the exports) at the documented default sampling; the same requests against each, alternating
// rounds, median round kept per gateway; the result is the median of the pairs' ratios. Several
// pairs because one process draws its JIT state once for its life: two processes of the same code
// differ by as much as the targets' margins (bench/RESULTS.md, sessions 11 and 12). One pair runs at a
// time (its rounds, then it stops), the gateways on this process's core, the load generator on its own.
// The load generator (autocannon) runs in its own process (bench/support/load.ts). Both gateways log
// at `info` (one access line per request, to /dev/null), so the trace ids the traced one adds to each
// line are part of what is measured; the traced one is scraped after each of its rounds.
// Targets: cached public list (the cache-hit lane) on ≥ 0.95 of off; a write (POST a draft entry) ≥ 0.9 of off.
//   npx tsx bench/observability.ts   (engines from MONGODB_URI / TEMPORAL_ADDRESS, else local ones;
//   the write rounds leave tens of thousands of entries with their postings: give a local engine
//   MONGO_HEAP=2g, its 512 MB default filled up in sessions 12 and 13)
// Env: BENCH_CONNECTIONS (50 for reads), BENCH_WRITE_CONNECTIONS (10), BENCH_DURATION (5 s per round),
// BENCH_ROUNDS (3), BENCH_PAIRS (3), BENCH_ENTRIES (60), BENCH_SAMPLER / BENCH_SAMPLER_ARG (OTEL_TRACES_SAMPLER(_ARG)
// of the traced gateway; unset: the documented default), BENCH_ONLY (`list` or `write`: that target
// alone, for a quicker look), BENCH_CPU_PROF (a folder: each gateway writes its V8 CPU profiles, one
// per thread, the largest the main thread's, under `off-<pair>/` and `on-<pair>/` there when it stops),
// BENCH_GATEWAY (`compiled`, the default: the production build as the image runs it, built once into a
// temporary folder; `source`: services/gateway.ts under tsx, what `npm start` runs),
// BENCH_GATEWAY_BUILD (an app folder built before, reused).
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort, startGatewayProcess } from './support/gateway-process.ts';
import { buildCompiledApp } from './support/compiled-app.ts';
import { processCpuMs } from './support/process-cpu.ts';
import { startBenchWorld } from './support/world.ts';
import { seedPublishedEntries } from './support/seed-entries.ts';
import { createApiKey } from './support/operator-key.ts';
import { loadCore, runLoad, type LoadJob, type ProcessLoadResult } from './support/load.ts';
import { createContext } from '../services/core/context.ts';
import { systemPrincipal } from '../services/core/principal.ts';
import { median } from './support/median.ts';

const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const writeConnections = Number(process.env.BENCH_WRITE_CONNECTIONS ?? 10);
const durationSec = Number(process.env.BENCH_DURATION ?? 5);
const writeDurationSec = Number(process.env.BENCH_WRITE_DURATION ?? 10);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const pairs = Number(process.env.BENCH_PAIRS ?? 3);
const entries = Number(process.env.BENCH_ENTRIES ?? 60);

const world = await startBenchWorld();
const scope = (await world.services.sites.resolve('localhost'))!;
await seedPublishedEntries(createContext(world.services, scope, systemPrincipal('benchmark seed'), { id: 'bench', ip: '127.0.0.1' }), entries);
const key = await createApiKey(world);

// The collector: takes every export and answers at once, counting what it got.
let exports = 0;
let exportedBytes = 0;
const collector = http.createServer((request, response) => {
  request.on('data', (chunk: Buffer) => (exportedBytes += chunk.length));
  request.on('end', () => {
    exports++;
    response.writeHead(200, { 'content-type': String(request.headers['content-type'] ?? 'application/x-protobuf') }).end();
  });
});
await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
const collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;

/** CPU time (user + system, µs) a process used so far: per request, what a path costs whatever the machine's load. */
const cpuMicros = (pid: number) => processCpuMs(pid) * 1000;

const children: ChildProcess[] = [];
// A failed run leaves no gateway behind.
process.on('exit', () => children.forEach((child) => child.exitCode === null && child.kill('SIGTERM')));
const profileDir = process.env.BENCH_CPU_PROF;
const app = process.env.BENCH_GATEWAY === 'source' ? undefined : buildCompiledApp(process.env.BENCH_GATEWAY_BUILD);
interface Gateway {
  base: string;
  pid: number;
  metricsPort?: number;
}
async function startGateway(name: string, env: Record<string, string>, metricsPort?: number): Promise<Gateway> {
  const nodeArgs = profileDir ? ['--cpu-prof', '--cpu-prof-interval=250', `--cpu-prof-dir=${profileDir}/${name}`] : [];
  const { base, pid } = await startGatewayProcess(world, env, { nodeArgs, children, app: app?.dir });
  return { base, pid, metricsPort };
}

const sampler: Record<string, string> = process.env.BENCH_SAMPLER
  ? { OTEL_TRACES_SAMPLER: process.env.BENCH_SAMPLER, OTEL_TRACES_SAMPLER_ARG: process.env.BENCH_SAMPLER_ARG ?? '' }
  : {};
// BENCH_METRICS=0: the "on" side without its metrics listener (traces only; the lane's share is
// then not scraped); BENCH_TRACES=0: metrics only; both: the noise floor of the comparison.
const metricsOn = process.env.BENCH_METRICS !== '0';
const tracesOn = process.env.BENCH_TRACES !== '0';
type Side = 'off' | 'on';
type Pair = Record<Side, Gateway>;
async function startPair(pair: number): Promise<Pair> {
  const metricsPort = metricsOn ? await freePort() : undefined;
  const [off, on] = await Promise.all([
    startGateway(`off-${pair}`, {}),
    startGateway(
      `on-${pair}`,
      {
        ...(metricsPort ? { METRICS_PORT: String(metricsPort) } : {}),
        ...(tracesOn ? { OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl, ...sampler } : {}),
      },
      metricsPort,
    ),
  ]);
  return { off, on };
}
async function stopPair(pair: Pair): Promise<void> {
  const pids = new Set([pair.off.pid, pair.on.pid]);
  const stopping = children.filter((child) => pids.has(child.pid!));
  for (const child of stopping) child.kill('SIGTERM');
  await Promise.all(stopping.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)))));
}

const LIST = '/api/v1/content?limit=20';
const write = (base: string): LoadJob => ({
  url: `${base}/api/manage/v1/content`,
  connections: writeConnections,
  durationSec: writeDurationSec,
  method: 'POST',
  headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  // The slug comes from the title (autocannon's ids hold capitals, which a given slug may not).
  body: JSON.stringify({ title: 'Bench [<id>]' }),
});
const read = (base: string): LoadJob => ({ url: `${base}${LIST}`, connections, durationSec });

type Kind = 'cached public list' | 'write (POST draft entry)';
const kinds: Kind[] = [];
const only = process.env.BENCH_ONLY;
if (only !== 'write') kinds.push('cached public list');
if (only !== 'list') kinds.push('write (POST draft entry)');
const jobOf = (kind: Kind, base: string) => (kind === 'cached public list' ? read(base) : write(base));

type Run = ProcessLoadResult & { cpuMicrosPerRequest: number };
/** runs[pair][kind][side]: one per round. */
const runs = Array.from({ length: pairs }, () => Object.fromEntries(kinds.map((kind) => [kind, { off: [] as Run[], on: [] as Run[] }])));
let scrapeBytes = 0;
let laneShare = 0;
/** Of the traced gateway's public list answers so far, the share the cache-hit lane sent (its own series). */
const laneShareOf = (text: string) => {
  const count = (lane: string) =>
    Number(
      new RegExp(
        `http_server_request_duration_seconds_count\\{surface="public",operation="public.content.list",status_class="2xx",lane="${lane}"\\} (\\d+)`,
      ).exec(text)?.[1] ?? 0,
    );
  return count('public-cache') / Math.max(1, count('public-cache') + count('full'));
};
let scrapeMs = 0;
// Each gateway's CPU with no request at all (its timers, the change feed's polls, and their
// monitoring): a load that runs slower on a busy machine carries more of it per request.
const idleSec = 5;
const idleMs: Record<Side, number> = { off: 0, on: 0 };
// One pair alive at a time: an idle gateway still spends 20-30 ms of CPU a second (its timers and
// polls), so the pairs not being measured would load the two cores the measured one runs on (with
// 15 pairs, 28 idle gateways: most of a core, and as many more connections for the engine to serve).
// Pinned before any gateway starts, so each inherits this process's cores and never takes turns with
// the load generator on its core (the first pair used to start unpinned: the pin came with the first load).
loadCore();
for (let pair = 0; pair < pairs; pair++) {
  const gateways = await startPair(pair);
  // Warm both: the lane holds the list after the first full-path answer; the JIT settles.
  for (const gateway of [gateways.off, gateways.on]) {
    if (kinds.includes('cached public list')) await runLoad({ ...read(gateway.base), durationSec: 2 });
    await runLoad({ ...write(gateway.base), durationSec: 1 });
  }
  const idleBefore = { off: cpuMicros(gateways.off.pid), on: cpuMicros(gateways.on.pid) };
  await new Promise((resolve) => setTimeout(resolve, idleSec * 1000));
  for (const side of ['off', 'on'] as const) idleMs[side] += (cpuMicros(gateways[side].pid) - idleBefore[side]) / 1000 / idleSec / pairs;
  for (let round = 0; round < rounds; round++) {
    // Alternate the order each round, so neither side always runs first.
    const sides: Side[] = round % 2 === 0 ? ['off', 'on'] : ['on', 'off'];
    for (const kind of kinds)
      for (const side of sides) {
        const gateway = gateways[side];
        const cpuBefore = cpuMicros(gateway.pid);
        const result = await runLoad(jobOf(kind, gateway.base));
        runs[pair][kind][side].push({ ...result, cpuMicrosPerRequest: (cpuMicros(gateway.pid) - cpuBefore) / Math.max(1, result.requests) });
        if (gateway.metricsPort !== undefined) {
          const started = performance.now();
          const text = await (await fetch(`http://127.0.0.1:${gateway.metricsPort}/metrics`)).text();
          scrapeMs = performance.now() - started;
          scrapeBytes = text.length;
          if (!text.includes('http_server_request_duration_seconds_bucket')) throw new Error('the traced gateway serves no request series');
          laneShare = laneShareOf(text);
        }
      }
  }
  await stopPair(gateways);
}
const rate = (list: Run[]) => median(list.map((r) => r.requestsPerSec));
const cpu = (list: Run[]) => median(list.map((r) => r.cpuMicrosPerRequest));

console.log(
  `\n${[metricsOn && 'metrics', tracesOn && 'traces'].filter(Boolean).join(' + ') || 'nothing'} on vs off, ${pairs} pairs of gateways, ${rounds} rounds of ${durationSec} s (writes ${writeDurationSec} s), median round per gateway (sampler: ${process.env.BENCH_SAMPLER ?? 'documented default'}; gateways ${app ? 'compiled' : 'from source under tsx'})`,
);
console.log('| target | pair | req/s off / on | ratio | gateway CPU µs/request off / on | ratio | non-2xx+errors |');
console.log('|---|---|---|---|---|---|---|');
const goal = { 'cached public list': 0.95, 'write (POST draft entry)': 0.9 } as const;
const verdicts: string[] = [];
for (const kind of kinds) {
  const byRate: number[] = [];
  const byCpu: number[] = [];
  for (const [pair, byKind] of runs.entries()) {
    const { off, on } = byKind[kind];
    byRate.push(rate(on) / Math.max(1, rate(off)));
    byCpu.push(cpu(off) / cpu(on));
    const failed = [...off, ...on].reduce((sum, r) => sum + r.non2xx + r.errors, 0);
    console.log(
      `| ${kind} | ${pair + 1} | ${rate(off)} / ${rate(on)} | ${byRate.at(-1)!.toFixed(3)} | ${cpu(off).toFixed(1)} / ${cpu(on).toFixed(1)} | ${byCpu.at(-1)!.toFixed(3)} | ${failed} |`,
    );
  }
  const [r, c] = [median(byRate), median(byCpu)];
  verdicts.push(`${kind} on/off, median of ${pairs} pairs: ${r.toFixed(3)} (target ≥ ${goal[kind]}) ${r >= goal[kind] ? 'met' : 'NOT MET'}`);
  verdicts.push(
    `${kind}: gateway CPU per request off/on, median of ${pairs} pairs: ${c.toFixed(3)} (the throughput ratio a CPU-bound gateway would see; target ≥ ${goal[kind]}) ${c >= goal[kind] ? 'met' : 'NOT MET'}`,
  );
}
console.log('');
for (const line of verdicts) console.log(line);
console.log(`idle gateway CPU (no requests, ${idleSec} s, mean of the pairs): off ${idleMs.off.toFixed(1)} ms/s, on ${idleMs.on.toFixed(1)} ms/s`);
if (metricsOn) console.log(`traced gateway: ${(laneShare * 100).toFixed(2)} % of its public list answers came from the cache-hit lane`);
console.log(`collector: ${exports} exports, ${(exportedBytes / 1e6).toFixed(1)} MB; last scrape ${scrapeBytes} bytes in ${scrapeMs.toFixed(1)} ms`);

for (const child of children) child.kill('SIGTERM');
await Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)))));
collector.close();
await world.close();
app?.remove();
process.exit(0);
