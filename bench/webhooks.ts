// Webhook deliveries end to end: 1,000 events × 3 endpoints to local receivers, through the real
// publisher, MongoDB, the Temporal server, the endpoint actors and a worker. Reports deliveries per
// second, p50/p95 from the emit to the receipt, and lost / duplicated deliveries (by delivery id).
// Baseline in the same run: the same 3,000 bodies POSTed straight to the same receivers (no queue,
// no durability). A second webhook run adds a fourth, dead endpoint (connection refused) to show
// that it does not slow the others. The run gets engines of its own (the same local engines as
// everywhere, on other ports and a temporary data folder) so it neither slows down nor is slowed
// down by other work on the shared ones; the CPU stays shared.
//   npx tsx bench/webhooks.ts
// Env: BENCH_EVENTS (1000), BENCH_EMIT_CONCURRENCY (20), BENCH_TIMEOUT_S (300),
//      BENCH_WARMUP (200: events through the whole path first, so the engines' JIT is warm),
//      BENCH_TEMPORAL = file (default: own dev server persisting to SQLite, via scripts/engines.mjs)
//                     | memory (own dev server with its in-memory store: no fsync per commit)
//                     | shared (TEMPORAL_ADDRESS / the shared dev server),
//      BENCH_MONGO = own (default: own mongo-java-server engine, H2 file, via scripts/engines.mjs)
//                  | shared (MONGODB_URI / the shared engine),
//      BENCH_OPLOG = 0 (default: the own engine without its oplog, as engines.mjs runs it unless
//                    STATE_FEED=change-stream) | 1 (with it: about 70% of the engine's CPU per write
//                    is the oplog append, see bench/RESULTS.md).
// The process plays a gateway: its change feed is open, so publishers hold the site's endpoints.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ensureEngines, stopEngines } from '../scripts/engines.mjs';
import { startBenchWorld } from './support/world.ts';
import { createWorker } from '../services/worker-factory.ts';
import { createContext } from '../services/core/context.ts';
import { invokeOperation } from '../services/core/operation.ts';
import { CAPABILITIES } from '../services/core/capabilities.ts';
import { createSiteResolver } from '../services/tenancy/site-resolver.ts';
import { adminEndpoints } from '../services/events/endpoint-ops.ts';
import { eventCollections } from '../services/events/model.ts';
import { attemptsTo } from '../services/events/history.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1000);
const ENDPOINTS = 3;
const EMIT_CONCURRENCY = Number(process.env.BENCH_EMIT_CONCURRENCY ?? 20);
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_S ?? 300) * 1000;
const WARMUP = Number(process.env.BENCH_WARMUP ?? 200);

interface Receipt {
  deliveryId: string;
  seq: number;
  sentAt: number;
  at: number;
}

async function startReceiver(receipts: Receipt[]) {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      receipts.push({ deliveryId: String(req.headers['x-service-delivery'] ?? ''), seq: body.data.seq, sentAt: body.data.sentAt, at: Date.now() });
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};

function summarize(name: string, receipts: Receipt[], startedAt: number, expected: number) {
  const ids = new Set(receipts.map((r) => r.deliveryId));
  const last = Math.max(...receipts.map((r) => r.at));
  const latencies = receipts.map((r) => r.at - r.sentAt);
  return {
    name,
    deliveries: receipts.length,
    perSec: Math.round((receipts.length / (last - startedAt)) * 1000),
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    lost: expected - ids.size,
    duplicated: receipts.length - ids.size,
  };
}

/** CPU seconds so far: of one process (from /proc), or of the whole machine (busy, all cores). */
const TICKS_PER_SECOND = 100;
/** CPU seconds of a process's threads, summed by thread name (`main`, `libuv-worker`, `C2 CompilerThre`…). */
function threadCpuSeconds(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
      const name = task === String(pid) ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/[-\s]?\d+$/, '');
      const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
      byName.set(name, (byName.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND); // utime, stime
    } catch {
      // the thread ended meanwhile
    }
  }
  return byName;
}
function machineCpuSeconds(): { busy: number; idle: number } {
  const [, ...values] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  const idle = values[3] + values[4]; // idle, iowait
  return { busy: (values.reduce((a, b) => a + b, 0) - idle) / TICKS_PER_SECOND, idle: idle / TICKS_PER_SECOND };
}
/**
 * Where the CPU went during a run: this process (publisher, worker, receivers), the MongoDB engine,
 * the rest (Temporal); and, for the two processes, their busiest threads.
 */
function cpuMeter(mongoPid: number | null) {
  const threads = () => ({ self: threadCpuSeconds(process.pid), mongo: mongoPid ? threadCpuSeconds(mongoPid) : new Map<string, number>() });
  const start = { threads: threads(), machine: machineCpuSeconds() };
  return (deliveries: number) => {
    const end = threads();
    const machine = machineCpuSeconds();
    const per = (seconds: number) => `${Math.round((seconds * 1e6) / deliveries)} µs`;
    const spent = (before: Map<string, number>, after: Map<string, number>) =>
      [...after]
        .map(([name, seconds]) => [name, seconds - (before.get(name) ?? 0)] as const)
        .filter(([, seconds]) => seconds > 0)
        .sort((a, b) => b[1] - a[1]);
    const self = spent(start.threads.self, end.self);
    const mongo = spent(start.threads.mongo, end.mongo);
    const total = (list: (readonly [string, number])[]) => list.reduce((sum, [, seconds]) => sum + seconds, 0);
    const top = (list: (readonly [string, number])[]) =>
      list
        .slice(0, 4)
        .map(([name, seconds]) => `${name} ${per(seconds)}`)
        .join(', ');
    const busy = machine.busy - start.machine.busy;
    const idle = machine.idle - start.machine.idle;
    return `CPU per delivery: this process ${per(total(self))} (${top(self)}), MongoDB engine ${per(total(mongo))} (${top(mongo)}), everything else ${per(Math.max(0, busy - total(self) - total(mongo)))}; machine idle ${Math.round((100 * idle) / (busy + idle))}%`;
  };
}

async function pool<T>(items: T[], concurrency: number, run: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await run(items[next++]);
    }),
  );
}

const temporalMode = process.env.BENCH_TEMPORAL ?? 'file';
const mongoMode = process.env.BENCH_MONGO ?? 'own';
const oplog = process.env.BENCH_OPLOG === '1';
const ownTemporalDir = temporalMode === 'file' ? fs.mkdtempSync(path.join(os.tmpdir(), 'bench-webhooks-')) : null;
const ownMongoDir = mongoMode === 'own' ? fs.mkdtempSync(path.join(os.tmpdir(), 'bench-webhooks-mongo-')) : null;
let memoryTemporal: ChildProcess | null = null;
if (ownMongoDir) {
  process.env.MONGODB_URI = (await ensureEngines({ dataDir: ownMongoDir, mongoPort: 27590, temporal: false, oplog, log: () => undefined })).mongoUri;
}
const mongoPid = ownMongoDir ? Number(fs.readFileSync(path.join(ownMongoDir, 'mongo.pid'), 'utf8')) : null;
if (temporalMode !== 'shared') {
  if (!process.env.MONGODB_URI) process.env.MONGODB_URI = (await ensureEngines({ dataDir: path.resolve('.data'), log: () => undefined })).mongoUri;
  if (ownTemporalDir) {
    // engines.mjs also probes the shared MongoDB; on a loaded machine that probe can time out once.
    let own: Awaited<ReturnType<typeof ensureEngines>> | undefined;
    for (let attempt = 1; !own; attempt++) {
      try {
        own = await ensureEngines({ dataDir: ownTemporalDir, temporalPort: 7590, mongo: false, log: () => undefined });
      } catch (error) {
        if (attempt >= 5) throw error;
        await new Promise((r) => setTimeout(r, 3_000));
      }
    }
    process.env.TEMPORAL_ADDRESS = own.temporalAddress;
  } else {
    await ensureEngines({ dataDir: path.resolve('.data'), log: () => undefined }); // installs the CLI if needed
    const bin = path.resolve('.engines/temporal-py/bin/temporal');
    memoryTemporal = spawn(
      bin,
      ['server', 'start-dev', '--headless', '--ip', '127.0.0.1', '--port', '7590', '--http-port', '8590', '--metrics-port', '8591', '--log-level', 'error'],
      { stdio: 'ignore' },
    );
    const open = () =>
      new Promise<boolean>((resolve) =>
        net
          .connect(7590, '127.0.0.1')
          .once('connect', function (this: net.Socket) {
            this.destroy();
            resolve(true);
          })
          .once('error', () => resolve(false)),
      );
    while (!(await open())) await new Promise((r) => setTimeout(r, 200));
    await new Promise((r) => setTimeout(r, 2_000)); // namespace registration
    process.env.TEMPORAL_ADDRESS = '127.0.0.1:7590';
  }
}
// A gateway (its change feed open, as startBenchWorld runs it): the publisher holds the site's endpoints.
const world = await startBenchWorld({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }, monitorCommands: true });
// Where the database time goes: every command of the process, by name and collection.
const commands = new Map<string, { count: number; ms: number }>();
const pendingCommands = new Map<number, string>();
world.services.mongo.on('commandStarted', (e) => {
  const collection = typeof e.command[e.commandName] === 'string' ? e.command[e.commandName] : '';
  // The local engine answers a filter without `_id` by reading every document of the collection.
  const filter = e.command.filter ?? e.command.query ?? (e.commandName === 'aggregate' ? {} : undefined);
  const scan = filter !== undefined && !('_id' in filter) ? ' (scan)' : '';
  pendingCommands.set(e.requestId, `${e.commandName} ${collection}${scan}`);
});
world.services.mongo.on('commandSucceeded', (e) => {
  const key = pendingCommands.get(e.requestId) ?? e.commandName;
  pendingCommands.delete(e.requestId);
  const entry = commands.get(key) ?? { count: 0, ms: 0 };
  entry.count++;
  entry.ms += e.duration;
  commands.set(key, entry);
});
const commandReport = (deliveries: number) =>
  [...commands.entries()]
    .sort((a, b) => b[1].ms - a[1].ms)
    .slice(0, 12)
    .map(
      ([key, { count, ms }]) =>
        `  ${key}: ${count} (${(count / deliveries).toFixed(2)}/delivery), ${Math.round(ms)} ms total, ${(ms / count).toFixed(1)} ms each`,
    )
    .join('\n');
const { worker, connection } = await createWorker(world.services);
const running = worker.run();
const baselineReceipts: Receipt[] = [];
const webhookReceipts: Receipt[] = [];
const baselineReceivers = await Promise.all(Array.from({ length: ENDPOINTS }, () => startReceiver(baselineReceipts)));
const receivers = await Promise.all(Array.from({ length: ENDPOINTS }, () => startReceiver(webhookReceipts)));
const extraReceivers: Array<Awaited<ReturnType<typeof startReceiver>>> = [];

try {
  // Baseline: the same bodies, POSTed directly with keep-alive, EMIT_CONCURRENCY × 3 in flight.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const post = (url: string, body: string, id: string) =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'x-service-delivery': id } }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end(body);
    });
  const baselineStart = Date.now();
  await pool([...Array(EVENTS).keys()], EMIT_CONCURRENCY, async (seq) => {
    const sentAt = Date.now();
    const body = JSON.stringify({ event: 'content.published', data: { seq, sentAt } });
    await Promise.all(baselineReceivers.map((r, i) => post(r.url, body, `${seq}-${i}`)));
  });
  const baseline = summarize('direct POST (baseline)', baselineReceipts, baselineStart, EVENTS * ENDPOINTS);

  // Webhooks: three endpoints subscribed, then EVENTS emits as operations would. Run twice: alone,
  // then with a fourth, dead endpoint (connection refused) subscribed to the same events.
  const scope = (await createSiteResolver(world.services).resolve('localhost'))!;
  const admin = { kind: 'user' as const, userId: 'bench', sessionId: 'bench', capabilities: new Set(CAPABILITIES), isPlatformOperator: false };
  const ctx = createContext(world.services, scope, admin, { id: 'bench', ip: '127.0.0.1' });
  const { deliveries } = eventCollections(ctx.db);

  async function webhookRun(name: string, event: string, targets: Array<{ url: string }>, receipts: Receipt[], extra: string[] = []) {
    const ids: string[] = [];
    for (const [i, r] of targets.entries()) {
      ids.push((await invokeOperation(adminEndpoints.create, ctx, { name: `${name} ${i}`, url: r.url, events: [event] })).endpoint.id);
    }
    for (const [i, url] of extra.entries()) await invokeOperation(adminEndpoints.create, ctx, { name: `${name} dead ${i}`, url, events: [event] });
    commands.clear();
    const cpu = cpuMeter(mongoPid);
    const started = Date.now();
    await pool([...Array(EVENTS).keys()], EMIT_CONCURRENCY, async (seq) => {
      await ctx.emit(event, { seq, sentAt: Date.now() });
    });
    const emitMs = Date.now() - started;
    const expected = EVENTS * targets.length;
    const live = { siteId: scope.site._id, endpointId: { $in: ids } };
    while (Date.now() - started < TIMEOUT_MS) {
      // The receipts first: a count scans the outbox on the local engine, under the collection's
      // lock that the publishers and the actors wait for, so counting while they run slowed them.
      if (new Set(receipts.map((r) => r.deliveryId)).size >= expected) {
        const final = await deliveries.countDocuments({ ...live, status: { $in: ['delivered', 'failed'] } });
        if (final >= expected) break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const cpuReport = cpu(expected);
    await new Promise((r) => setTimeout(r, 2_000)); // late duplicates would show up here
    const result = summarize(name, receipts, started, expected);
    console.log(`${name}: ${cpuReport}`);
    // When the receipts came, from the first emit: whether the actors deliver while the burst is emitted.
    const byTime = receipts.map((r) => r.at - started).sort((a, b) => a - b);
    const shares = [0.1, 0.25, 0.5, 0.75, 1].map((q) => `${q * 100}% by ${byTime[Math.max(0, Math.ceil(q * byTime.length) - 1)]} ms`).join(', ');
    console.log(`${name}: receipts after the first emit: ${shares}`);
    const failed = await deliveries.countDocuments({ ...live, status: 'failed' });
    // Where the time goes: stored → attempt started (wake + claim), the attempt itself.
    const created = new Map((await deliveries.find(live, { projection: { createdAt: 1 } }).toArray()).map((d) => [d._id, d.createdAt.getTime()]));
    const attemptRows = (await attemptsTo(ctx.db, scope.site._id, ids)).filter((a) => a.status === 'succeeded');
    const waits = attemptRows.map((a) => a.startedAt!.getTime() - created.get(a.deliveryId)!);
    const runs = attemptRows.map((a) => a.finishedAt!.getTime() - a.startedAt!.getTime());
    const breakdown = `stored → attempt started: p50 ${percentile(waits, 50)} ms, p95 ${percentile(waits, 95)} ms; HTTP attempt: p50 ${percentile(runs, 50)} ms, p95 ${percentile(runs, 95)} ms`;
    console.log(`${name}: emitting took ${emitMs} ms; failed deliveries: ${failed}; ${breakdown}`);
    console.log(`${name}: database commands during the run (emits and deliveries):\n${commandReport(expected)}`);
    return result;
  }

  // Warm-up (not reported): a fresh engine runs interpreted at first, a production one does not.
  if (WARMUP > 0) {
    const warmReceipts: Receipt[] = [];
    const warm = await startReceiver(warmReceipts);
    extraReceivers.push(warm);
    await invokeOperation(adminEndpoints.create, ctx, { name: 'warm-up', url: warm.url, events: ['user.created'] });
    await pool([...Array(WARMUP).keys()], EMIT_CONCURRENCY, async (seq) => ctx.emit('user.created', { seq, sentAt: Date.now() }));
    const until = Date.now() + TIMEOUT_MS;
    while (new Set(warmReceipts.map((r) => r.deliveryId)).size < WARMUP && Date.now() < until) await new Promise((r) => setTimeout(r, 500));
  }
  const result = await webhookRun('webhooks (actors)', 'content.published', receivers, webhookReceipts);
  const withDeadReceipts: Receipt[] = [];
  const receivers2 = await Promise.all(Array.from({ length: ENDPOINTS }, () => startReceiver(withDeadReceipts)));
  extraReceivers.push(...receivers2);
  const dead = net.createServer();
  await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
  const deadUrl = `http://127.0.0.1:${(dead.address() as AddressInfo).port}/hook`;
  await new Promise<void>((resolve) => dead.close(() => resolve()));
  const withDead = await webhookRun('webhooks, 4th endpoint dead', 'content.updated', receivers2, withDeadReceipts, [deadUrl]);

  // Temporal cost: events in every actor history (all runs) per delivery.
  let historyEvents = 0;
  for await (const execution of world.services.temporal.client.workflow.list({ query: `TaskQueue="${world.services.temporal.taskQueue}"` })) {
    const history = await world.services.temporal.client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
    historyEvents += history.events?.length ?? 0;
  }

  const rows = [baseline, result, withDead].map((r) => `| ${r.name} | ${r.deliveries} | ${r.perSec} | ${r.p50} | ${r.p95} | ${r.lost} | ${r.duplicated} |`);
  console.log(
    `\nTemporal: ${temporalMode}; MongoDB: ${mongoMode}${mongoMode === 'own' ? (oplog ? ' (oplog on)' : ' (no oplog)') : ''}; ${EVENTS} events × ${ENDPOINTS} endpoints, emit concurrency ${EMIT_CONCURRENCY}\n`,
  );
  console.log(['| path | deliveries | per second | p50 ms | p95 ms | lost | duplicated |', '|---|---|---|---|---|---|---|', ...rows].join('\n'));
  console.log(
    `\nTemporal history events per delivery (all actor runs, both runs' ${2 * EVENTS * ENDPOINTS + EVENTS} deliveries incl. the dead endpoint's): ${(historyEvents / (2 * EVENTS * ENDPOINTS + EVENTS)).toFixed(3)}`,
  );
  console.log(
    `ratio webhooks/baseline: throughput ${(result.perSec / baseline.perSec).toFixed(3)}, p50 ×${(result.p50 / Math.max(1, baseline.p50)).toFixed(1)}, p95 ×${(result.p95 / Math.max(1, baseline.p95)).toFixed(1)}`,
  );
  console.log(
    `ratio with a dead endpoint / without: p95 ×${(withDead.p95 / Math.max(1, result.p95)).toFixed(2)}, throughput ×${(withDead.perSec / result.perSec).toFixed(2)}`,
  );
} finally {
  worker.shutdown();
  await running.catch(() => undefined);
  await connection.close();
  for (const r of [...receivers, ...baselineReceivers, ...extraReceivers]) {
    r.server.closeAllConnections();
    r.server.close();
  }
  await world.close();
  memoryTemporal?.kill('SIGTERM');
  for (const dir of [ownTemporalDir, ownMongoDir]) {
    if (!dir) continue;
    await stopEngines({ dataDir: dir });
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
