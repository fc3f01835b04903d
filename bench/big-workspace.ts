// Cost flat in workspace size (issue 24): one service, two workspaces provisioned alike through
// POST /tenants, one holding BENCH_BIG (100,000) published entries and one BENCH_SMALL (100), and
// the same Management API calls on both, sequential, rounds alternating which goes first:
// create, get by id, update (PATCH), the list's first page right after that write, publish,
// delete. Then the big one grown through the API by 8 clients (create + publish) and an uncached
// crawl of its public list in pages of 100, both from a load generator in its own process.
// Targets: big / small median ≤ 1.5 for each operation; growth ≥ 300 entries/s; crawl ≥ 10,000 entries/s.
// Seeding: one entry created and published through the API, then copied BENCH_BIG times straight
// into the database with the driver (same document shape, its revision rows copied too, the kept
// entry counters moved by as many), which takes seconds where the API would take an hour.
//   npx tsx bench/big-workspace.ts   (engines from MONGODB_URI / TEMPORAL_ADDRESS, else local ones;
//   BENCH_OWN_ENGINES=1: engines of the run's own, see bench/support/world.ts; BENCH_MONGO_PORT / BENCH_TEMPORAL_PORT: their ports)
// Env: BENCH_BIG (100000), BENCH_SMALL (100), BENCH_OPS (30 per operation per workspace per round),
// BENCH_ROUNDS (3), BENCH_GROW (2000), BENCH_CRAWL_PAGES (300).
import os from 'node:os';
import { spawn } from 'node:child_process';
import type { Db } from 'mongodb';
import { ownEnginesIfAsked, startBenchWorld, startChangeFeed } from './support/world.ts';
import { createApiKey } from './support/operator-key.ts';
import { provisionWorkspaces } from './support/provision.ts';
import type { ApiJob, ApiResult } from './support/api-client-process.ts';
import { callJson } from './support/http-call.ts';
import { enginePidOf, processCpuMs } from './support/process-cpu.ts';
import { WORKER_NODE_FLAGS } from '../scripts/worker-node-flags.mjs';
import { createRuntime } from '../services/runtime.ts';
import { closeServices } from '../services/core/services.ts';
import { configurePublicCache } from '../services/public-read/state.ts';
import { newId } from '../services/core/ids.ts';
import { contentCollections, type EntryDoc } from '../services/content/model.ts';
import { ENTRY_COUNTS_ID } from '../services/content/entry-counts.ts';
import { SITE_STATE_COLLECTION } from '../services/core/site-state.ts';
import { median } from './support/median.ts';

const big = Number(process.env.BENCH_BIG ?? 100_000);
const small = Number(process.env.BENCH_SMALL ?? 100);
const opsPerRound = Number(process.env.BENCH_OPS ?? 30);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const grow = Number(process.env.BENCH_GROW ?? 2000);
const crawlPages = Number(process.env.BENCH_CRAWL_PAGES ?? 300);
const loadAtStart = os.loadavg();

const stopEngines = await ownEnginesIfAsked();
const world = await startBenchWorld({ env: { LIFECYCLE_WAIT_MS: '30000' } });
const { services } = world;
const address = await world.app.listen({ port: 0, host: '127.0.0.1' });
// The provisioning worker (the workspace actor) in a process of its own.
const worker = spawn(process.execPath, [...WORKER_NODE_FLAGS, '--import', 'tsx', 'bench/support/worker-process.ts'], {
  env: {
    ...process.env,
    DB_PREFIX: world.config.DB_PREFIX,
    TEMPORAL_TASK_QUEUE: world.config.TEMPORAL_TASK_QUEUE,
    SECRET_KEY: world.config.SECRET_KEY,
    LOG_LEVEL: 'warn',
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
process.once('exit', () => worker.kill('SIGTERM')); // also when the run fails
await new Promise<void>((resolve, reject) => {
  worker.stdout!.on('data', (chunk: Buffer) => String(chunk).includes('worker ready') && resolve());
  worker.once('exit', (code) => reject(new Error(`worker exited ${code}`)));
});
// One at a time, so the i-th host's administrator is owner<i>@<host> (bench/support/provision.ts).
const { hosts } = await provisionWorkspaces(address, await createApiKey(world), 2, 1);
interface Workspace {
  name: 'small' | 'big';
  host: string;
  key: string;
  db: Db;
  siteId: string;
}
const workspaces: Workspace[] = [];
for (const [i, name] of (['small', 'big'] as const).entries()) {
  const host = hosts[i]!;
  const key = await createApiKey(world, { host, email: `owner${i}@${host}` });
  const scope = (await services.sites.resolve(host))!;
  workspaces.push({ name, host, key, db: services.workspaceDb(scope.workspace), siteId: scope.site._id });
}

const call = (ws: Workspace, method: string, path: string, body?: unknown) =>
  callJson(address, method, `/api/manage/v1${path}`, { host: ws.host, authorization: `Bearer ${ws.key}` }, body);
function expectStatus<T extends { status: number; body: unknown }>(answer: T, status: number, what: string): T {
  if (answer.status !== status) throw new Error(`${what}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer;
}
let serial = 0;
const entryInput = (label: string) => ({
  title: `Bench ${label} ${serial}`,
  slug: `bench-${label}-${serial++}`,
  excerpt: 'A short summary of the entry.',
  blocks: { version: 1, blocks: [{ type: 'paragraph', text: 'Lorem ipsum dolor sit amet. '.repeat(8) }] },
  fields: { rank: serial },
});

/** `count` copies of one entry created and published through the API (see the header: the seeding method). */
async function seed(ws: Workspace, count: number): Promise<number> {
  const started = performance.now();
  const created = expectStatus(await call(ws, 'POST', '/content', entryInput('template')), 201, 'create');
  expectStatus(await call(ws, 'POST', `/content/${String(created.body.id)}/publish`, {}), 200, 'publish');
  const { entries, revisions } = contentCollections(ws.db);
  const template = (await entries.findOne({ _id: String(created.body.id) }))!;
  const templateRevisions = await revisions.find({ entryId: template._id }).toArray();
  const oldest = template.createdAt.getTime() - count * 1000;
  const batch = 1000;
  for (let from = 0; from < count; from += batch) {
    const docs: EntryDoc[] = [];
    for (let i = from; i < Math.min(count, from + batch); i++) {
      const at = new Date(oldest + i * 1000);
      const slug = `seeded-${i}`;
      const title = `Seeded entry ${i}`;
      const live = template.live ? { ...template.live, slug, title, titleLower: title.toLowerCase() } : null;
      docs.push({ ...template, _id: newId(at.getTime()), slug, title, titleLower: title.toLowerCase(), live, createdAt: at, updatedAt: at, publishedAt: at });
    }
    await entries.insertMany(docs, { ordered: false });
    await revisions.insertMany(
      docs.flatMap((doc) =>
        templateRevisions.map((revision) => ({ ...revision, _id: `${doc._id}:${revision.version}`, entryId: doc._id, slug: doc.slug, title: doc.title })),
      ),
      { ordered: false },
    );
    if ((from / batch) % 20 === 19) process.stderr.write(`  ${ws.name}: seeded ${from + batch}/${count}\n`);
  }
  await ws.db
    .collection<{ _id: string }>(SITE_STATE_COLLECTION)
    .updateOne({ _id: ENTRY_COUNTS_ID }, { $inc: { total: count, [`sites.${ws.siteId}`]: count } }, { upsert: true });
  return (performance.now() - started) / 1000;
}

const seedSeconds = { small: await seed(workspaces[0]!, small), big: await seed(workspaces[1]!, big) };
console.log(`seeded: small ${small} entries in ${seedSeconds.small.toFixed(1)} s, big ${big} in ${seedSeconds.big.toFixed(1)} s`);

// ---- sequential latency, the same calls on both workspaces ----
const OPERATIONS = ['create', 'get', 'update', 'list after write', 'publish', 'delete'] as const;
type Operation = (typeof OPERATIONS)[number];
const samples = Object.fromEntries(workspaces.map((ws) => [ws.name, Object.fromEntries(OPERATIONS.map((op) => [op, [] as number[]]))])) as Record<
  Workspace['name'],
  Record<Operation, number[]>
>;
async function timed<T>(ws: Workspace, op: Operation, fn: () => Promise<T>): Promise<T> {
  const start = performance.now();
  const result = await fn();
  samples[ws.name][op].push(performance.now() - start);
  return result;
}
async function cycle(ws: Workspace, record: boolean) {
  const t = record ? timed : <T>(_ws: Workspace, _op: Operation, fn: () => Promise<T>) => fn();
  const created = await t(ws, 'create', () => call(ws, 'POST', '/content', entryInput(ws.name)));
  const id = String(expectStatus(created, 201, 'create').body.id);
  expectStatus(await t(ws, 'get', () => call(ws, 'GET', `/content/${id}`)), 200, 'get');
  expectStatus(await t(ws, 'update', () => call(ws, 'PATCH', `/content/${id}`, { title: `Edited ${serial++}` })), 200, 'update');
  const list = expectStatus(await t(ws, 'list after write', () => call(ws, 'GET', '/content?limit=20')), 200, 'list');
  if ((list.body.data as unknown[]).length !== 20) throw new Error('list: not a full page');
  expectStatus(await t(ws, 'publish', () => call(ws, 'POST', `/content/${id}/publish`, {})), 200, 'publish');
  const deleted = await t(ws, 'delete', () => call(ws, 'DELETE', `/content/${id}`));
  if (deleted.status >= 300) throw new Error(`delete: ${deleted.status}`);
}
for (const ws of workspaces) for (let i = 0; i < 10; i++) await cycle(ws, false); // warm-up
for (let round = 0; round < rounds; round++) {
  for (const ws of round % 2 === 0 ? workspaces : [...workspaces].reverse()) for (let i = 0; i < opsPerRound; i++) await cycle(ws, true);
}

// ---- growth and crawl, from a load generator in its own process ----
function runClient(job: ApiJob): Promise<ApiResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/support/api-client-process.ts'], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += String(chunk)));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as ApiResult) : reject(new Error(`client exited ${code}`))));
    child.stdin!.end(JSON.stringify(job));
  });
}
// CPU time of this process (the gateways) and of the local MongoDB engine while the clients run:
// what a grown entry or a crawled page costs whatever the machine's load (Linux /proc; the engine
// found by its launcher's port, none when MONGODB_URI names another server).
const enginePid = enginePidOf();
const engineCpuMs = () => processCpuMs(enginePid);
async function withCpu<T>(fn: () => Promise<T>): Promise<T & { gatewayCpuMs: number; engineCpuMs: number }> {
  const gateway = process.cpuUsage();
  const engine = engineCpuMs();
  const result = await fn();
  const used = process.cpuUsage(gateway);
  return { ...result, gatewayCpuMs: (used.user + used.system) / 1000, engineCpuMs: engineCpuMs() - engine };
}
const bigWs = workspaces[1]!;
const grown = await withCpu(() => runClient({ kind: 'grow', address, host: bigWs.host, key: bigWs.key, count: grow, clients: 8, prefix: `g${Date.now()}` }));
// The crawl reads through a gateway whose public read cache is off: every page is a database read.
const uncachedRuntime = await createRuntime(world.config);
configurePublicCache(uncachedRuntime.services, { enabled: false });
await startChangeFeed(uncachedRuntime.services);
const uncachedApp = await uncachedRuntime.buildApp({ logger: false });
const uncachedAddress = await uncachedApp.listen({ port: 0, host: '127.0.0.1' });
const crawl = await withCpu(() => runClient({ kind: 'crawl', address: uncachedAddress, host: bigWs.host, pages: crawlPages, limit: 100 }));

const fmt = (n: number) => n.toFixed(1).padStart(7);
console.log(
  `\nBig workspace: ${big.toLocaleString('en')} entries against ${small} in the same service; load average at start ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}, at end ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} (${os.cpus().length} cores)`,
);
console.log(`sequential Management API calls, ${opsPerRound * rounds} per operation per workspace (${rounds} rounds alternating), median ms`);
console.log('operation          |   small |     big | ratio (target ≤ 1.5)');
for (const op of OPERATIONS) {
  const s = median(samples.small[op]);
  const b = median(samples.big[op]);
  console.log(`${op.padEnd(18)} | ${fmt(s)} | ${fmt(b)} | ${(b / s).toFixed(2)}${b / s > 1.5 ? '  NOT MET' : ''}`);
}
const cpu = (r: { gatewayCpuMs: number; engineCpuMs: number }, units: number, unit: string) =>
  `CPU per ${unit}: gateway process ${(r.gatewayCpuMs / Math.max(1, units)).toFixed(1)} ms, MongoDB engine ${enginePid ? `${(r.engineCpuMs / Math.max(1, units)).toFixed(1)} ms` : 'not measured'}`;
console.log(
  `\ngrowing the big workspace through the API, 8 clients, create + publish: ${grown.items} entries in ${grown.seconds} s = ${grown.perSec} entries/s (target ≥ 300), ${grown.failures} failures; ${cpu(grown, grown.items, 'entry')}`,
);
const pages = Math.ceil(crawl.items / 100);
console.log(
  `uncached crawl of its public list, pages of 100: ${crawl.items} entries in ${crawl.seconds} s = ${crawl.perSec} entries/s (target ≥ 10,000), median ${crawl.pageMs} ms per page, ${crawl.failures} failures; ${cpu(crawl, pages, 'page')}`,
);

await uncachedApp.close();
await uncachedRuntime.services.changeFeed.stop();
await closeServices(uncachedRuntime.services);
worker.kill('SIGTERM');
await world.close();
await stopEngines();
process.exit(0);
