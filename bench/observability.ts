// What metrics and traces cost (issue 26): two gateway processes (services/gateway.ts, the real
// entry) on the same databases, one with both off, one with its metrics listener (METRICS_PORT) and
// tracing to an OTLP/HTTP collector on loopback (this process: it takes and drops the exports) at the
// documented default sampling; the same requests against each, alternating rounds, median round kept.
// The load generator (autocannon) runs in its own process (bench/support/load.ts). Both gateways log
// at `info` (one access line per request, to /dev/null), so the trace ids the traced one adds to each
// line are part of what is measured; the traced one is scraped after each of its rounds.
// Targets: cached public list (the cache-hit lane) on ≥ 0.95 of off; a write (POST a draft entry) ≥ 0.9 of off.
//   npx tsx bench/observability.ts   (engines from MONGODB_URI / TEMPORAL_ADDRESS, else local ones)
// Env: BENCH_CONNECTIONS (50 for reads), BENCH_WRITE_CONNECTIONS (10), BENCH_DURATION (5 s per round),
// BENCH_ROUNDS (3), BENCH_ENTRIES (60), BENCH_SAMPLER / BENCH_SAMPLER_ARG (OTEL_TRACES_SAMPLER(_ARG)
// of the traced gateway; unset: the documented default), BENCH_ONLY (`list` or `write`: that target
// alone, for a quicker look), BENCH_CPU_PROF (a folder: each gateway writes its V8 CPU profiles, one
// per thread, the largest the main thread's, under `off/` and `on/` there when it stops).
import { spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort, startGatewayProcess } from './support/gateway-process.ts';
import { startBenchWorld } from './support/world.ts';
import { seedPublishedEntries } from './support/seed-entries.ts';
import { createApiKey } from './support/operator-key.ts';
import { runLoad, type LoadJob, type ProcessLoadResult } from './support/load.ts';
import { createContext } from '../services/core/context.ts';
import { systemPrincipal } from '../services/core/principal.ts';

const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const writeConnections = Number(process.env.BENCH_WRITE_CONNECTIONS ?? 10);
const durationSec = Number(process.env.BENCH_DURATION ?? 5);
const writeDurationSec = Number(process.env.BENCH_WRITE_DURATION ?? 10);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
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
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime are fields 14 and 15 of the whole line (12 and 13 after the command), in clock ticks.
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
}
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim() || 100);

const children: ChildProcess[] = [];
// A failed run leaves no gateway behind.
process.on('exit', () => children.forEach((child) => child.exitCode === null && child.kill('SIGTERM')));
const pids: Record<string, number> = {};
const profileDir = process.env.BENCH_CPU_PROF;
async function startGateway(side: 'off' | 'on', env: Record<string, string>): Promise<string> {
  const nodeArgs = profileDir ? ['--cpu-prof', '--cpu-prof-interval=250', `--cpu-prof-dir=${profileDir}/${side}`] : [];
  const { base, pid } = await startGatewayProcess(world, env, { nodeArgs, children });
  pids[base] = pid;
  return base;
}

const metricsPort = await freePort();
const sampler: Record<string, string> = process.env.BENCH_SAMPLER
  ? { OTEL_TRACES_SAMPLER: process.env.BENCH_SAMPLER, OTEL_TRACES_SAMPLER_ARG: process.env.BENCH_SAMPLER_ARG ?? '' }
  : {};
// BENCH_METRICS=0: the "on" side without its metrics listener (traces only; the lane's share is
// then not scraped); BENCH_TRACES=0: metrics only; both: the noise floor of the comparison.
const metricsOn = process.env.BENCH_METRICS !== '0';
const tracesOn = process.env.BENCH_TRACES !== '0';
const [off, on] = await Promise.all([
  startGateway('off', {}),
  startGateway('on', {
    ...(metricsOn ? { METRICS_PORT: String(metricsPort) } : {}),
    ...(tracesOn ? { OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl, ...sampler } : {}),
  }),
]);
const gateways = { off, on } as const;

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

// Warm both: the lane holds the list after the first full-path answer; the JIT settles.
for (const base of [off, on]) {
  await runLoad({ ...read(base), durationSec: 2 });
  await runLoad({ ...write(base), durationSec: 1 });
}

// Each gateway's CPU with no request at all (its timers, the change feed's polls, and their
// monitoring): a load that runs slower on a busy machine carries more of it per request.
const idleSec = 5;
const idleBefore = { off: cpuMicros(pids[off]), on: cpuMicros(pids[on]) };
await new Promise((resolve) => setTimeout(resolve, idleSec * 1000));
const idleMsPerSec = { off: (cpuMicros(pids[off]) - idleBefore.off) / 1000 / idleSec, on: (cpuMicros(pids[on]) - idleBefore.on) / 1000 / idleSec };

type Side = keyof typeof gateways;
const targets: { name: string; side: Side; job: LoadJob }[] = [];
const only = process.env.BENCH_ONLY;
if (only !== 'write') for (const side of ['off', 'on'] as const) targets.push({ name: `cached public list, ${side}`, side, job: read(gateways[side]) });
if (only !== 'list') for (const side of ['off', 'on'] as const) targets.push({ name: `write (POST draft entry), ${side}`, side, job: write(gateways[side]) });

type Run = ProcessLoadResult & { cpuMicrosPerRequest: number };
const runs = new Map<string, Run[]>(targets.map((t) => [t.name, []]));
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
for (let round = 0; round < rounds; round++) {
  // Alternate the order each round, so neither side always runs first.
  const ordered = round % 2 === 0 ? targets : [...targets].reverse();
  for (const target of ordered) {
    const pid = pids[gateways[target.side]];
    const cpuBefore = cpuMicros(pid);
    const result = await runLoad(target.job);
    runs.get(target.name)!.push({ ...result, cpuMicrosPerRequest: (cpuMicros(pid) - cpuBefore) / Math.max(1, result.requests) });
    if (target.side === 'on' && metricsOn) {
      const started = performance.now();
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      scrapeMs = performance.now() - started;
      scrapeBytes = text.length;
      if (!text.includes('http_server_request_duration_seconds_bucket')) throw new Error('the traced gateway serves no request series');
      laneShare = laneShareOf(text);
    }
  }
}
const median = (name: string) => [...runs.get(name)!].sort((a, b) => a.requestsPerSec - b.requestsPerSec)[Math.floor(rounds / 2)];

const rows = targets.map((t) => ({ ...t, result: median(t.name) }));
const ratio = (kind: 'cached public list' | 'write (POST draft entry)') =>
  median(`${kind}, on`).requestsPerSec / Math.max(1, median(`${kind}, off`).requestsPerSec);
console.log(
  `\n${[metricsOn && 'metrics', tracesOn && 'traces'].filter(Boolean).join(' + ') || 'nothing'} on vs off, ${rounds} rounds of ${durationSec} s, median round (sampler: ${process.env.BENCH_SAMPLER ?? 'documented default'})`,
);
console.log('| target | req/s | p50 ms | p99 ms | gateway CPU µs/request (median round) | non-2xx+errors | statuses |');
console.log('|---|---|---|---|---|---|---|');
const cpuMedian = (name: string) => [...runs.get(name)!.map((r) => r.cpuMicrosPerRequest)].sort((a, b) => a - b)[Math.floor(rounds / 2)];
for (const { name, result } of rows)
  console.log(
    `| ${name} | ${result.requestsPerSec} | ${result.p50} | ${result.p99} | ${cpuMedian(name).toFixed(1)} | ${result.non2xx + result.errors} | ${JSON.stringify(result.statuses)} |`,
  );
const kinds = [...new Set(targets.map((t) => t.name.slice(0, t.name.lastIndexOf(','))))] as ('cached public list' | 'write (POST draft entry)')[];
const goal = { 'cached public list': 0.95, 'write (POST draft entry)': 0.9 } as const;
console.log('');
for (const kind of kinds) {
  const byRate = ratio(kind);
  console.log(`${kind} on/off: ${byRate.toFixed(3)} (target ≥ ${goal[kind]}) ${byRate >= goal[kind] ? 'met' : 'NOT MET'}`);
}
for (const kind of kinds) {
  const byCpu = cpuMedian(`${kind}, off`) / cpuMedian(`${kind}, on`);
  console.log(
    `${kind}: gateway CPU per request off/on ${byCpu.toFixed(3)} (the throughput ratio a CPU-bound gateway would see; target ≥ ${goal[kind]}) ${byCpu >= goal[kind] ? 'met' : 'NOT MET'}`,
  );
}
console.log(`idle gateway CPU (no requests, ${idleSec} s): off ${idleMsPerSec.off.toFixed(1)} ms/s, on ${idleMsPerSec.on.toFixed(1)} ms/s`);
console.log(`traced gateway: ${(laneShare * 100).toFixed(2)} % of its public list answers came from the cache-hit lane`);
console.log(`collector: ${exports} exports, ${(exportedBytes / 1e6).toFixed(1)} MB; last scrape ${scrapeBytes} bytes in ${scrapeMs.toFixed(1)} ms`);

for (const child of children) child.kill('SIGTERM');
await Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)))));
collector.close();
await world.close();
process.exit(0);
