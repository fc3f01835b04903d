// Workspace backup and restore at size (issue 25), in one run: a workspace of N entries and M MB of
// media is backed up and restored through the routes (the workflows run in a worker process of
// their own, its resident memory sampled every 25 ms), and the same data is read and written with
// the plain driver in the same run (every document through a cursor, every GridFS file streamed,
// written to a file; then inserted again in batches and re-uploaded): throughput against that
// baseline (target ≥ 0.5), peak worker memory (target ≤ 256 MB). docs/backups.md.
//   BENCH_BACKUP_ENTRIES=100000 BENCH_BACKUP_MEDIA_MB=1024 npx tsx bench/backup.ts
// (MONGODB_URI / TEMPORAL_ADDRESS of running engines, or BENCH_OWN_ENGINES=1, as bench/export.ts.)
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { randomBytes } from 'node:crypto';
import { GridFSBucket, type Document, type IndexDescription } from 'mongodb';
import { ownEnginesIfAsked, startBenchWorld } from './support/world.ts';
import { processCpuMs } from './support/process-cpu.ts';
import { createApiKey } from './support/operator-key.ts';
import { seedBulk, uploadBenchMedia } from './support/seed-bulk.ts';
import { buildCompiledApp } from './support/compiled-app.ts';
import { WORKER_ENV, WORKER_NODE_FLAGS } from '../scripts/worker-node-flags.mjs';
import { provisionInProcess, requestWorkspace } from '../services/platform/provisioning.ts';
import { backupWorkflowId, restoreWorkflowId } from '../workflows/contracts/backup.ts';

const N = Number(process.env.BENCH_BACKUP_ENTRIES ?? 20_000);
const MEDIA_MB = Number(process.env.BENCH_BACKUP_MEDIA_MB ?? 100);
const MB = 1024 * 1024;
const load = () =>
  loadavg()
    .map((v) => v.toFixed(2))
    .join(' ');
const loadAtStart = load();
// A process's CPU seconds (user + system): less moved by the machine's load than the wall time.
const cpuOf = (pid: number | null) => processCpuMs(pid) / 1000;

// Engines of its own on ports of its own (28690 MongoDB, 28691-28693 Temporal; BENCH_MONGO_PORT and
// BENCH_TEMPORAL_PORT move them, when a shared machine hands out another range).
const stopOwnEngines = await ownEnginesIfAsked({
  mongo: Number(process.env.BENCH_MONGO_PORT ?? 28690),
  temporal: Number(process.env.BENCH_TEMPORAL_PORT ?? 28691),
});
// A run that fails still stops the engines it started (and the worker, when there is one).
let stopWorker = () => undefined as unknown;
const failed = (error: unknown) => {
  process.stderr.write(`${(error as Error)?.stack ?? error}\n`);
  stopWorker();
  void stopOwnEngines().finally(() => process.exit(1));
};
process.on('unhandledRejection', failed);
process.on('uncaughtException', failed);
// With engines of its own, the MongoDB engine's CPU is read too (its pid file): the restore's CPU
// (engine + worker) against the baseline's (engine + this process's driver) is a ratio the
// machine's load moves less than the times'.
const enginePid = process.env.BENCH_OWN_ENGINES_DIR ? Number(readFileSync(join(process.env.BENCH_OWN_ENGINES_DIR, 'mongo.pid'), 'utf8').trim()) : null;
const engineCpu = () => cpuOf(enginePid);
const selfCpu = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};
const backupDir = mkdtempSync(join(tmpdir(), 'cwb-bench-backups-'));
const world = await startBenchWorld({ env: { BACKUP_DIR: backupDir } });
const { config, services } = world;
const key = await createApiKey(world);

async function api(method: string, url: string, body?: unknown) {
  const res = await world.app.inject({
    method: method as 'GET',
    url: `/api/manage/v1${url}`,
    headers: { authorization: `Bearer ${key}`, host: 'localhost' },
    payload: body as object,
  });
  if (res.statusCode >= 400) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json();
}

// --- the workspace: N entries (about 1 KB each) and MEDIA_MB files of 1 MB in its media bucket ----
const requested = await requestWorkspace(services, {
  name: 'Bench backup',
  domains: ['bench-backup.example.test'],
  admin: { email: 'owner@bench.example.test', password: 'correct horse battery staple' },
});
const workspace = await provisionInProcess(services, requested._id);
// The workspace's Db as the service hands it out: its collections get their declared indexes.
const db = services.workspaceDb(workspace);
const siteId = requested.provisioning!.siteId;
const seedSeconds = await seedBulk(db, siteId, N, MEDIA_MB);
process.stderr.write(`seeded ${N} entries and ${MEDIA_MB} MB of media in ${seedSeconds.toFixed(1)} s\n`);
const bucket = new GridFSBucket(db, { bucketName: 'media_files' });
// The baseline's copy uploads files of the same size as the seeded ones.
const file = randomBytes(MB);

const collections = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).filter((name) => name !== 'media_files.chunks');
let documents = 0;
for (const name of collections) documents += await db.collection(name).countDocuments({});

// --- baseline: the plain driver, same data, same run -------------------------------------------
const scratch = join(backupDir, 'baseline.bin');
const readStarted = performance.now();
const out = createWriteStream(scratch);
const write = (bytes: Buffer) => new Promise<void>((resolve) => (out.write(bytes) ? resolve() : out.once('drain', () => resolve())));
for (const name of collections) for await (const doc of db.collection(name).find({}, { batchSize: 1000 })) await write(Buffer.from(JSON.stringify(doc)));
for await (const meta of db.collection('media_files.files').find({}))
  for await (const chunk of bucket.openDownloadStream(meta._id) as AsyncIterable<Buffer>) await write(chunk);
await new Promise((resolve) => out.end(resolve));
const baselineReadSec = (performance.now() - readStarted) / 1000;
const copy = services.mongo.db(`${config.DB_PREFIX}baseline`);
const writeStarted = performance.now();
const writeCpuStart = { engine: engineCpu(), self: selfCpu() };
// The bucket's `.files` documents are written by the GridFS uploads below, with the chunks.
// Each collection with the source's indexes, made first (as a restore writes into indexed collections).
for (const name of collections) {
  const indexes = (await db.collection(name).listIndexes().toArray()).filter((index) => index.name !== '_id_');
  // Each index as listed, less what describes it rather than defines it (its version, its namespace).
  const specs = indexes.map(({ v: _v, ns: _ns, ...spec }) => spec as IndexDescription);
  if (specs.length > 0) await copy.collection(name).createIndexes(specs);
}
for (const name of collections.filter((c) => c !== 'media_files.files')) {
  let batch: Document[] = [];
  for await (const doc of db.collection(name).find({}, { batchSize: 1000 })) {
    batch.push(doc);
    if (batch.length === 500) {
      await copy.collection(name).insertMany(batch);
      batch = [];
    }
  }
  if (batch.length > 0) await copy.collection(name).insertMany(batch);
}
await uploadBenchMedia(copy, MEDIA_MB, file);
const baselineWriteSec = (performance.now() - writeStarted) / 1000;
const baselineWriteCpu = { engine: engineCpu() - writeCpuStart.engine, driver: selfCpu() - writeCpuStart.self };
rmSync(scratch);

// --- the worker in its own process, as production runs it, its memory sampled -----------------------
// Compiled (`npm run build` into a temporary app folder beside a node_modules link, as the image lays
// it out: docs/production.md) and started with plain node and the worker's flags; BENCH_WORKER=source
// runs services/worker.ts under tsx instead (what `npm start` runs), BENCH_WORKER_BUILD=<app folder>
// reuses a build. BENCH_WORKER_PROFILE=<folder>: the worker writes a CPU profile there when it stops;
// BENCH_WORKER_LOG=<file>: its log lines (LOG_LEVEL info) go there.
const ROOT = resolvePath(import.meta.dirname, '..');
const fromSource = process.env.BENCH_WORKER === 'source';
const app = fromSource ? undefined : buildCompiledApp(process.env.BENCH_WORKER_BUILD);
// BENCH_WORKER_FLAGS (space separated): other Node flags than the worker's, to try them;
// BENCH_WORKER_ENV=none starts it without the worker's allocator environment (WORKER_ENV), to compare.
const flags = process.env.BENCH_WORKER_FLAGS?.split(' ').filter(Boolean) ?? WORKER_NODE_FLAGS;
const workerEnv = process.env.BENCH_WORKER_ENV === 'none' ? {} : WORKER_ENV;
const profile = process.env.BENCH_WORKER_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', resolvePath(process.env.BENCH_WORKER_PROFILE)] : [];
const worker: ChildProcess = spawn(
  process.execPath,
  fromSource ? [...flags, ...profile, '--import', 'tsx', 'services/worker.ts'] : [...flags, ...profile, 'dist/services/worker.js'],
  {
    cwd: app?.dir ?? ROOT,
    env: {
      ...process.env,
      ...workerEnv,
      // Nothing of this process's loaders reaches the compiled worker.
      NODE_OPTIONS: '',
      NODE_ENV: 'production',
      DB_PREFIX: config.DB_PREFIX,
      TEMPORAL_TASK_QUEUE: config.TEMPORAL_TASK_QUEUE,
      SECRET_KEY: config.SECRET_KEY,
      BACKUP_DIR: backupDir,
      DATA_DIR: join(backupDir, 'worker-data'),
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  },
);
const workerLog = process.env.BENCH_WORKER_LOG ? createWriteStream(process.env.BENCH_WORKER_LOG) : null;
stopWorker = () => worker.kill('SIGKILL');
await new Promise<void>((resolve, reject) => {
  let text = '';
  const on = (chunk: Buffer) => {
    workerLog?.write(chunk);
    text = (text + chunk).slice(-20_000);
    if (text.includes('"msg":"worker running"')) resolve();
  };
  worker.stdout!.on('data', on);
  worker.stderr!.on('data', on);
  worker.once('exit', (code) => reject(new Error(`worker exited ${code}: ${text.slice(-2000)}`)));
});
// The worker's start settles (its first reconciler passes) before its idle memory is read.
await new Promise((resolve) => setTimeout(resolve, 5000));
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
const idleRss = rssOf(worker.pid!);
const idleCpu = cpuOf(worker.pid!);
let peakRss = idleRss;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssOf(worker.pid!))), 25);

async function until(url: string, field: 'backup' | 'restore') {
  for (;;) {
    const body = (await api('GET', url))[field];
    if (body.state !== 'running') return body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const backupStarted = performance.now();
const { backup: started } = await api('POST', `/tenants/${workspace._id}/backups`);
const backup = await until(`/tenants/${workspace._id}/backups/${started.id}`, 'backup');
const backupSec = (performance.now() - backupStarted) / 1000;
if (backup.state !== 'succeeded') throw new Error(`backup ${backup.state}: ${backup.error}`);
const backupPeakRss = peakRss;
const backupCpu = cpuOf(worker.pid!) - idleCpu;
const restoreStarted = performance.now();
const restoreEngineStart = engineCpu();
const { restore: asked } = await api('POST', `/tenants/${workspace._id}/restore`, { backupId: backup.id });
const restoreAnsweredSec = (performance.now() - restoreStarted) / 1000;
const restore = await until(`/tenants/${workspace._id}/restores/${asked.id}`, 'restore');
const restoreSec = (performance.now() - restoreStarted) / 1000;
if (restore.state !== 'succeeded') throw new Error(`restore ${restore.state}: ${restore.error}`);
clearInterval(sampler);
const restoreCpu = cpuOf(worker.pid!) - idleCpu - backupCpu;
const restoreEngineCpu = engineCpu() - restoreEngineStart;

const bytes = backup.size as number;
const row = (name: string, sec: number, base: number) =>
  `| ${name} | ${sec.toFixed(1)} s | ${(bytes / MB / sec).toFixed(1)} MB/s | ${Math.round(documents / sec)} docs/s | ${base.toFixed(1)} s | ${(base / sec).toFixed(2)} |`;
console.log(
  `\nWorkspace: ${N} entries + ${MEDIA_MB} MB media, ${documents} documents in ${collections.length} collections; archive ${(bytes / MB).toFixed(1)} MB. Load at start ${loadAtStart}, at end ${load()}.`,
);
console.log(
  `Worker: ${fromSource ? 'services/worker.ts under tsx' : 'compiled (npm run build), plain node'} ${flags.join(' ')}, environment ${JSON.stringify(workerEnv)}; its CPU time: backup ${backupCpu.toFixed(1)} s, restore ${restoreCpu.toFixed(1)} s.\n`,
);
console.log('| step | time | throughput | documents | plain driver, same data | ratio (driver time / ours) |');
console.log('|---|---|---|---|---|---|');
console.log(row('backup (POST → succeeded; hold, copy, manifest)', backupSec, baselineReadSec));
console.log(row('restore (POST → succeeded; verify, suspend, replace, reactivate)', restoreSec, baselineWriteSec));

// Where each workflow's time went: its activities, from the workflow history (scheduled → completed).
async function steps(workflowId: string): Promise<string> {
  const history = await services.temporal.client.workflow.getHandle(workflowId).fetchHistory();
  const seconds = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(t?.seconds ?? 0) + (t?.nanos ?? 0) / 1e9;
  const scheduled = new Map<string, { name: string; at: number }>();
  const spent = new Map<string, number>();
  for (const event of history.events ?? []) {
    const at = seconds(event.eventTime);
    const scheduledAttributes = event.activityTaskScheduledEventAttributes;
    if (scheduledAttributes) scheduled.set(String(event.eventId), { name: scheduledAttributes.activityType?.name ?? '?', at });
    const done = event.activityTaskCompletedEventAttributes;
    if (done) {
      const from = scheduled.get(String(done.scheduledEventId))!;
      spent.set(from.name, (spent.get(from.name) ?? 0) + at - from.at);
    }
  }
  return [...spent].map(([name, sec]) => `${name} ${sec.toFixed(1)} s`).join(', ');
}
console.log(`\nBackup steps: ${await steps(backupWorkflowId(workspace._id, backup.id))}.`);
console.log(
  `Restore steps: ${await steps(restoreWorkflowId(workspace._id, restore.id))} (the route's own verification before its 202: ${restoreAnsweredSec.toFixed(1)} s).`,
);
const mark = (ok: boolean) => (ok ? 'met' : 'NOT met');
if (enginePid) {
  const ours = restoreEngineCpu + restoreCpu;
  const theirs = baselineWriteCpu.engine + baselineWriteCpu.driver;
  console.log(
    `\nCPU seconds: restore ${ours.toFixed(1)} (engine ${restoreEngineCpu.toFixed(1)}, worker ${restoreCpu.toFixed(1)}) against the baseline's write ${theirs.toFixed(1)} (engine ${baselineWriteCpu.engine.toFixed(1)}, driver ${baselineWriteCpu.driver.toFixed(1)}): ratio ${(theirs / ours).toFixed(2)}`,
  );
}
console.log(`\nbackup ratio ${(baselineReadSec / backupSec).toFixed(2)} (target ≥ 0.5): ${mark(baselineReadSec / backupSec >= 0.5)}`);
console.log(`restore ratio ${(baselineWriteSec / restoreSec).toFixed(2)} (target ≥ 0.5): ${mark(baselineWriteSec / restoreSec >= 0.5)}`);
console.log(
  `peak worker memory ${(peakRss / MB).toFixed(0)} MB (target ≤ 256 MB): ${mark(peakRss <= 256 * MB)}; idle ${(idleRss / MB).toFixed(0)} MB, growth ${((peakRss - idleRss) / MB).toFixed(0)} MB (peak during the backup ${(backupPeakRss / MB).toFixed(0)} MB)`,
);

worker.kill('SIGTERM');
await new Promise((resolve) => worker.once('exit', resolve));
await services.mongo.db(`${config.DB_PREFIX}baseline`).dropDatabase();
await world.close();
rmSync(backupDir, { recursive: true, force: true });
app?.remove();
await stopOwnEngines();
process.exit(0);
