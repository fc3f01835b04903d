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
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { GridFSBucket, type Document } from 'mongodb';
import { ownEnginesIfAsked, startBenchWorld } from './support/world.ts';
import { createApiKey } from './support/operator-key.ts';
import { seedBulk, uploadBenchMedia } from './support/seed-bulk.ts';
import { WORKER_NODE_FLAGS } from '../scripts/worker-node-flags.mjs';
import { provisionInProcess, requestWorkspace } from '../services/platform/provisioning.ts';

const N = Number(process.env.BENCH_BACKUP_ENTRIES ?? 20_000);
const MEDIA_MB = Number(process.env.BENCH_BACKUP_MEDIA_MB ?? 100);
const MB = 1024 * 1024;
const load = () =>
  loadavg()
    .map((v) => v.toFixed(2))
    .join(' ');
const loadAtStart = load();

const stopOwnEngines = await ownEnginesIfAsked();
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
const db = services.mongo.db(workspace.dbName);
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
// The bucket's `.files` documents are written by the GridFS uploads below, with the chunks.
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
rmSync(scratch);

// --- the worker in its own process, its memory sampled --------------------------------------------
const worker: ChildProcess = spawn(process.execPath, [...WORKER_NODE_FLAGS, '--import', 'tsx', 'bench/support/worker-process.ts'], {
  env: {
    ...process.env,
    DB_PREFIX: config.DB_PREFIX,
    TEMPORAL_TASK_QUEUE: config.TEMPORAL_TASK_QUEUE,
    SECRET_KEY: config.SECRET_KEY,
    BACKUP_DIR: backupDir,
    LOG_LEVEL: 'warn',
  },
  stdio: ['ignore', 'pipe', 'pipe'],
});
await new Promise<void>((resolve, reject) => {
  let text = '';
  const on = (chunk: Buffer) => {
    text += chunk;
    if (text.includes('worker ready')) resolve();
  };
  worker.stdout!.on('data', on);
  worker.stderr!.on('data', on);
  worker.once('exit', (code) => reject(new Error(`worker exited ${code}: ${text.slice(-2000)}`)));
});
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
const idleRss = rssOf(worker.pid!);
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
const restoreStarted = performance.now();
const { restore: asked } = await api('POST', `/tenants/${workspace._id}/restore`, { backupId: backup.id });
const restore = await until(`/tenants/${workspace._id}/restores/${asked.id}`, 'restore');
const restoreSec = (performance.now() - restoreStarted) / 1000;
if (restore.state !== 'succeeded') throw new Error(`restore ${restore.state}: ${restore.error}`);
clearInterval(sampler);

const bytes = backup.size as number;
const row = (name: string, sec: number, base: number) =>
  `| ${name} | ${sec.toFixed(1)} s | ${(bytes / MB / sec).toFixed(1)} MB/s | ${Math.round(documents / sec)} docs/s | ${base.toFixed(1)} s | ${(base / sec).toFixed(2)} |`;
console.log(
  `\nWorkspace: ${N} entries + ${MEDIA_MB} MB media, ${documents} documents in ${collections.length} collections; archive ${(bytes / MB).toFixed(1)} MB. Load at start ${loadAtStart}, at end ${load()}.\n`,
);
console.log('| step | time | throughput | documents | plain driver, same data | ratio (driver time / ours) |');
console.log('|---|---|---|---|---|---|');
console.log(row('backup (POST → succeeded; hold, copy, manifest)', backupSec, baselineReadSec));
console.log(row('restore (POST → succeeded; verify, suspend, replace, reactivate)', restoreSec, baselineWriteSec));
console.log(
  `\nWorker resident memory: ${(idleRss / MB).toFixed(0)} MB idle, peak ${(peakRss / MB).toFixed(0)} MB (growth ${((peakRss - idleRss) / MB).toFixed(0)} MB).`,
);

worker.kill('SIGTERM');
await services.mongo.db(`${config.DB_PREFIX}baseline`).dropDatabase();
await world.close();
rmSync(backupDir, { recursive: true, force: true });
await stopOwnEngines();
process.exit(0);
