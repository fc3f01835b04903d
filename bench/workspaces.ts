// Workspaces at scale (issue 13): provision N workspaces through POST /tenants (workspaces per
// minute); public and management reads spread over all of them against the same reads on one, in
// one run (p99 ratio, target ≤ 1.25); gateway heap growth per workspace (target ≤ 50 KB); gateway
// start time with N workspaces against one (target ≤ 1.2×).
//   BENCH_WORKSPACES=1000 npx tsx --expose-gc bench/workspaces.ts
// The worker, each measured gateway start and the load generator (autocannon, bench/support/load.ts)
// run in their own processes; the gateway under load runs in this one.
import { spawn, type ChildProcess } from 'node:child_process';
import { WORKER_NODE_FLAGS } from '../scripts/worker-node-flags.mjs';
import { createServer } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ownEnginesIfAsked, startBenchWorld } from './support/world.ts';
import { createApiKey } from './support/operator-key.ts';
import { provisionWorkspaces } from './support/provision.ts';
import { runLoad } from './support/load.ts';
import type { CommandStartedEvent } from 'mongodb';
import { GATEWAYS_COLLECTION, STATE_CHANGES_COLLECTION } from '../services/core/change-feed.ts';
import { median } from './support/median.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const N = Number(process.env.BENCH_WORKSPACES ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_PROVISION_CONCURRENCY ?? 8);
const durationSec = Number(process.env.BENCH_DURATION ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
const childEnv = (config: { DB_PREFIX: string; TEMPORAL_TASK_QUEUE: string; SECRET_KEY: string }, extra: Record<string, string> = {}) => ({
  ...process.env,
  DB_PREFIX: config.DB_PREFIX,
  TEMPORAL_TASK_QUEUE: config.TEMPORAL_TASK_QUEUE,
  SECRET_KEY: config.SECRET_KEY,
  LOG_LEVEL: 'warn',
  ...extra,
});

function waitForLine(child: ChildProcess, text: string, ms = 120_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no "${text}": ${out.slice(-2000)}`)), ms);
    const on = (chunk: Buffer) => {
      out += chunk;
      if (out.includes(text)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', on);
    child.stderr?.on('data', on);
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out.slice(-2000)}`)));
  });
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/** Spawns services/gateway.ts and times it from spawn to its first 200 on /healthz. */
async function gatewayStartMs(env: NodeJS.ProcessEnv): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/gateway.ts'], {
    env: { ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return performance.now() - started;
      if (child.exitCode !== null) throw new Error('gateway exited');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}
const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const stopEngines = await ownEnginesIfAsked();
const world = await startBenchWorld({ monitorCommands: true, env: { LIFECYCLE_WAIT_MS: '30000' } });
// Database commands of the gateway under load, but for its change feed's own (what a read costs).
let requestCommands = 0;
let commandTally = new Map<string, number>();
world.services.mongo.on('commandStarted', (event: CommandStartedEvent) => {
  const collection = event.commandName === 'getMore' ? event.command.collection : event.command[event.commandName];
  if (collection === STATE_CHANGES_COLLECTION || collection === GATEWAYS_COLLECTION) return;
  requestCommands++;
  const what = `${event.commandName} ${String(collection)}`;
  commandTally.set(what, (commandTally.get(what) ?? 0) + 1);
});

async function load(name: string, base: string, requests: { path: string; headers: Record<string, string> }[]) {
  const before = { commands: requestCommands, lane: world.app.publicLane.answered, cpu: process.cpuUsage() };
  commandTally = new Map();
  const result = await runLoad({ url: base, connections, durationSec, requests });
  if (commandTally.size > 0) console.error(`  ${name}: ${[...commandTally].map(([what, n]) => `${what} ×${n}`).join(', ')}`);
  const perRequest = (n: number) => n / Math.max(1, result.requests);
  return {
    name,
    rps: result.requestsPerSec,
    p50: result.p50,
    p99: result.p99,
    bad: result.non2xx + result.errors,
    commands: perRequest(requestCommands - before.commands),
    lane: perRequest(world.app.publicLane.answered - before.lane),
    cpuMicros: perRequest((({ user, system }) => user + system)(process.cpuUsage(before.cpu))),
    generatorCpuMicros: result.generatorCpuMicrosPerRequest,
  };
}
const { config } = world;
const worker = spawn(process.execPath, [...WORKER_NODE_FLAGS, '--import', 'tsx', 'bench/support/worker-process.ts'], {
  env: childEnv(config),
  stdio: ['ignore', 'pipe', 'pipe'],
});
const oneWorld = await startBenchWorld();
try {
  await waitForLine(worker, 'worker ready');
  const address = await world.app.listen({ port: 0, host: '127.0.0.1' });
  const operator = await createApiKey(world);
  const auth = { authorization: `Bearer ${operator}` };

  // Baseline reads on the bootstrap workspace, and the heap before provisioning.
  const heapBefore = heap();

  // 1. Provision N workspaces through the API.
  const provisioned = await provisionWorkspaces(address, operator, N, CONCURRENCY);
  const { ids, hosts } = provisioned;

  // 2. Reads spread over every workspace against the same reads on one, alternating rounds.
  const publicPath = '/api/v1/content?limit=1';
  const targets = [
    { name: 'public read, one workspace', requests: [{ path: publicPath, headers: { host: hosts[0] } }] },
    { name: `public read, spread over ${hosts.length}`, requests: hosts.map((host) => ({ path: publicPath, headers: { host } })) },
    { name: 'management read, one workspace', requests: [{ path: `/api/manage/v1/tenants/${ids[0]}`, headers: auth }] },
    { name: `management read, spread over ${ids.length}`, requests: ids.map((id) => ({ path: `/api/manage/v1/tenants/${id}`, headers: auth })) },
  ];
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const runs = new Map(targets.map((t) => [t.name, [] as Awaited<ReturnType<typeof load>>[]]));
  for (const t of targets) await load(t.name, address, t.requests); // warm-up (fills the Host cache)
  for (let r = 0; r < rounds; r++) {
    for (const t of targets) {
      const result = await load(t.name, address, t.requests);
      console.error(
        `  round ${r + 1}, ${t.name}: ${result.rps} req/s, p99 ${result.p99} ms, lane ${(100 * result.lane).toFixed(0)}%, ${result.commands.toFixed(4)} commands/request, CPU µs/request gateway ${result.cpuMicros.toFixed(0)} generator ${result.generatorCpuMicros.toFixed(0)}`,
      );
      runs.get(t.name)!.push(result);
    }
  }
  const results = targets.map((t) => {
    const list = runs.get(t.name)!;
    return { ...list.sort((a, b) => a.p99 - b.p99)[Math.floor(list.length / 2)], bad: list.reduce((sum, x) => sum + x.bad, 0) };
  });
  const heapAfter = heap();

  // 3. Gateway start with N workspaces (this deployment) against one (a fresh deployment),
  // alternating, so both see the same machine (a start is mostly compiling the gateway, which the machine's load slows).
  const startOne: number[] = [];
  const startMany: number[] = [];
  for (let i = 0; i < 5; i++) {
    startOne.push(await gatewayStartMs(childEnv(oneWorld.config)));
    startMany.push(await gatewayStartMs(childEnv(config)));
  }

  console.log(`\nWorkspaces at scale: ${N} workspaces, ${connections} connections, ${durationSec}s per round, median of ${rounds} rounds\n`);
  console.log(
    `provisioning through POST /tenants (concurrency ${CONCURRENCY}): ${provisioned.perMinute.toFixed(0)} workspaces/min (${provisioned.seconds.toFixed(0)} s, ${provisioned.notActive} not active within the wait)`,
  );
  console.log(
    '\n| reads | req/s | p50 ms | p99 ms | gateway CPU µs/request | generator CPU µs/request | DB commands/request | answered by the lane | non-2xx+errors |\n|---|---|---|---|---|---|---|---|---|',
  );
  for (const r of results)
    console.log(
      `| ${r.name} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.cpuMicros.toFixed(0)} | ${r.generatorCpuMicros.toFixed(0)} | ${r.commands.toFixed(4)} | ${(100 * r.lane).toFixed(0)}% | ${r.bad} |`,
    );
  console.log(
    `\np99 ratio spread/one: public ${(results[1].p99 / results[0].p99).toFixed(2)}, management ${(results[3].p99 / results[2].p99).toFixed(2)} (target ≤ 1.25)`,
  );
  console.log(
    `gateway heap growth: ${((heapAfter - heapBefore) / 1024 / N).toFixed(1)} KB per workspace (${((heapAfter - heapBefore) / 1048576).toFixed(1)} MiB for ${N}; target ≤ 50 KB)`,
  );
  console.log(
    `gateway start (spawn → first /healthz 200, median of 5, alternating): ${median(startMany).toFixed(0)} ms with ${N + 1} workspaces, ${median(startOne).toFixed(0)} ms with 1: ratio ${(median(startMany) / median(startOne)).toFixed(2)} (target ≤ 1.2)`,
  );
} finally {
  worker.kill('SIGTERM');
  await new Promise((resolve) => worker.once('exit', resolve));
  await oneWorld.close();
  await world.close();
  await stopEngines();
}
