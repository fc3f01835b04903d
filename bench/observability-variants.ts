// Where the traced gateway's cost is (issue 26, bench/RESULTS.md): several gateway processes, each with
// its own environment, on the same data; the cached public list (the cache-hit lane) against each in
// alternating rounds, gateway CPU per request from /proc (main thread and the others apart), median,
// lowest and first quartile of the rounds (on a loaded machine a round only gets slower: the low
// rounds are the least disturbed), and the paired ratio against the first variant.
//   BENCH_VARIANTS='[{"name":"off","env":{}},{"name":"on","env":{"OTEL_EXPORTER_OTLP_ENDPOINT":"$COLLECTOR","METRICS_PORT":"$METRICS"}}]' \
//   MONGODB_URI=mongodb://127.0.0.1:27117 TEMPORAL_ADDRESS=127.0.0.1:7233 npx tsx bench/observability-variants.ts
// `$COLLECTOR` is this process's OTLP/HTTP sink (takes and drops exports), `$METRICS` a free port;
// `"compiled": true` in a variant runs the production build (`node dist/services/gateway.js`) instead
// of the sources under tsx (BENCH_GATEWAY_BUILD=<app folder> reuses a build).
// Env: BENCH_ROUNDS (10), BENCH_DURATION (3 s), BENCH_CPU_PROF (a folder: V8 CPU profiles per variant),
// BENCH_NODE_FLAGS (node flags for every gateway, `$NAME` the variant's name: e.g. `--perf-basic-prof`),
// BENCH_PERF=1 (`perf record -e cpu-clock` of rounds 1 and 2 into $BENCH_PERF_DIR (/tmp)/perf-<name>-<round>.data;
// BENCH_PERF=g: with call graphs, `perf record -g`).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort, startGatewayProcess } from './support/gateway-process.ts';
import { buildCompiledApp } from './support/compiled-app.ts';
import { processCpuMs } from './support/process-cpu.ts';
import { startBenchWorld } from './support/world.ts';
import { seedPublishedEntries } from './support/seed-entries.ts';
import { runLoad } from './support/load.ts';
import { createContext } from '../services/core/context.ts';
import { systemPrincipal } from '../services/core/principal.ts';

const variants = JSON.parse(process.env.BENCH_VARIANTS!) as { name: string; env: Record<string, string>; compiled?: boolean }[];
// A variant with `"compiled": true` runs the production build (support/compiled-app.ts), built once.
const app = variants.some((v) => v.compiled) ? buildCompiledApp(process.env.BENCH_GATEWAY_BUILD) : undefined;
const rounds = Number(process.env.BENCH_ROUNDS ?? 10);
const durationSec = Number(process.env.BENCH_DURATION ?? 3);
const world = await startBenchWorld();
const scope = (await world.services.sites.resolve('localhost'))!;
await seedPublishedEntries(createContext(world.services, scope, systemPrincipal('benchmark seed'), { id: 'bench', ip: '127.0.0.1' }), 60);
let exports = 0;
const collector = http.createServer((request, response) => {
  exports++;
  request.resume();
  request.on('end', () => response.writeHead(200, { 'content-type': String(request.headers['content-type'] ?? 'application/x-protobuf') }).end());
});
await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
const collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim() || 100);
const cpuMicros = (pid: number) => processCpuMs(pid) * 1000;
const children: ChildProcess[] = [];
process.on('exit', () => children.forEach((child) => child.exitCode === null && child.kill('SIGTERM')));
const profileDir = process.env.BENCH_CPU_PROF;
async function startGateway(name: string, env: Record<string, string>, compiled?: boolean) {
  const metricsPort = await freePort();
  const resolved = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.replace('$COLLECTOR', collectorUrl).replace('$METRICS', String(metricsPort))]));
  const profile = profileDir ? ['--cpu-prof', '--cpu-prof-interval=250', `--cpu-prof-dir=${profileDir}/${name}`] : [];
  const extra = process.env.BENCH_NODE_FLAGS ? process.env.BENCH_NODE_FLAGS.replaceAll('$NAME', name).split(' ') : [];
  const { base, pid } = await startGatewayProcess(world, resolved, { nodeArgs: [...profile, ...extra], children, app: compiled ? app!.dir : undefined });
  return { name, base, pid };
}

const gws = await Promise.all(variants.map((v) => startGateway(v.name, v.env, v.compiled)));
const LIST = '/api/v1/content?limit=20';
for (const g of gws) await runLoad({ url: `${g.base}${LIST}`, connections: 50, durationSec: 2 });
const cpu: Record<string, number[]> = {};
const rps: Record<string, number[]> = {};
const idle: Record<string, number> = {};
const before = Object.fromEntries(gws.map((g) => [g.name, cpuMicros(g.pid)]));
await new Promise((r) => setTimeout(r, 5000));
for (const g of gws) idle[g.name] = (cpuMicros(g.pid) - before[g.name]) / 5000;
const threadCpu = (pid: number) => {
  const out = { main: 0, other: 0 };
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const f = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
    out[tid === String(pid) ? 'main' : 'other'] += ((Number(f[11]) + Number(f[12])) * 1e6) / CLOCK_TICKS;
  }
  return out;
};
const t0 = Object.fromEntries(gws.map((g) => [g.name, threadCpu(g.pid)]));
const served: Record<string, number> = {};
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? gws : [...gws].reverse();
  for (const g of order) {
    const c0 = cpuMicros(g.pid);
    const perf =
      process.env.BENCH_PERF && round >= 1 && round <= 2
        ? spawn(
            'perf',
            [
              'record',
              ...(process.env.BENCH_PERF === 'g' ? ['-g'] : []),
              '-e',
              'cpu-clock',
              '-F',
              '1999',
              '-p',
              String(g.pid),
              '-o',
              `${process.env.BENCH_PERF_DIR ?? '/tmp'}/perf-${g.name}-${round}.data`,
              '--',
              'sleep',
              String(durationSec - 0.5),
            ],
            { stdio: 'ignore' },
          )
        : undefined;
    const r = await runLoad({ url: `${g.base}${LIST}`, connections: 50, durationSec });
    if (perf) await new Promise((resolve) => (perf.exitCode !== null ? resolve(null) : perf.once('exit', resolve)));
    (cpu[g.name] ??= []).push((cpuMicros(g.pid) - c0) / r.requests);
    (rps[g.name] ??= []).push(r.requestsPerSec);
    served[g.name] = (served[g.name] ?? 0) + r.requests;
  }
}
const t1 = Object.fromEntries(gws.map((g) => [g.name, threadCpu(g.pid)]));
for (const g of gws)
  console.log(
    g.name,
    'main µs/req',
    ((t1[g.name].main - t0[g.name].main) / served[g.name]).toFixed(1),
    'other µs/req',
    ((t1[g.name].other - t0[g.name].other) / served[g.name]).toFixed(1),
  );
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const q1 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 4)];
const base = gws[0].name;
for (const g of gws) {
  const ratios = cpu[g.name].map((c, i) => cpu[base][i] / c);
  const rr = rps[g.name].map((c, i) => c / rps[base][i]);
  console.log(
    `${g.name.padEnd(14)} cpu µs/req med ${med(cpu[g.name]).toFixed(1)} [${cpu[g.name].map((x) => x.toFixed(1)).join(' ')}] min ${Math.min(...cpu[g.name]).toFixed(1)} q1 ${q1(cpu[g.name]).toFixed(1)} paired cpu ratio med ${med(ratios).toFixed(3)} req/s med ${med(rps[g.name])} paired rps ratio med ${med(rr).toFixed(3)} idle ${idle[g.name].toFixed(1)} ms/s`,
  );
}
for (const g of gws) {
  const byName: Record<string, number> = {};
  for (const tid of readdirSync(`/proc/${g.pid}/task`)) {
    const raw = readFileSync(`/proc/${g.pid}/task/${tid}/stat`, 'utf8');
    const name = raw.slice(raw.indexOf('(') + 1, raw.lastIndexOf(')'));
    const f = raw.split(') ')[1].split(' ');
    const key = tid === String(g.pid) ? 'main' : 'other';
    void name;
    byName[key] = (byName[key] ?? 0) + ((Number(f[11]) + Number(f[12])) * 1000) / CLOCK_TICKS;
  }
  console.log(g.name, JSON.stringify(byName));
}
console.log(`collector: ${exports} exports`);
for (const child of children) child.kill('SIGTERM');
await Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)))));
collector.close();
await world.close();
app?.remove();
process.exit(0);
