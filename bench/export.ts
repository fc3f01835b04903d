// Static export at size (issue 11), in one run: a full export of N published entries (pages per
// second, target ≥ 500; peak growth of the worker's resident memory, target < 128 MB), then an
// incremental run after one entry changed (seconds, target < 3), then archive download throughput
// (tar with Content-Length, and tar.gz) against reading the same bytes straight from storage (the
// export packs, read by id as services/export/files.ts does, no tar, no HTTP).
//   BENCH_OWN_ENGINES=1 BENCH_EXPORT_ENTRIES=10000 npx tsx bench/export.ts
// (BENCH_OWN_ENGINES=1: a MongoDB engine and Temporal dev server of its own on random ports, stopped
// at the end; or MONGODB_URI / TEMPORAL_ADDRESS of engines started for it. BENCH_ROUNDS: download
// rounds, default 3. BENCH_GC_PROBE=1: also the worker's live heap, see below.
// BENCH_WORKER_NODE_FLAGS: the worker's Node flags instead of scripts/worker-node-flags.mjs, for an
// A/B against another start ('' = none, as before issue 11's fix).)
// The Temporal worker runs in its own process, started as every worker is (its memory is what is
// measured, from /proc/<pid>/status every 25 ms); the download client runs in its own process too.
// Entries are seeded by inserting copies of one entry made and published through the operations
// (seeding is not what is measured).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { ownEnginesIfAsked, startBenchWorld } from './support/world.ts';
import { WORKER_NODE_FLAGS } from '../scripts/worker-node-flags.mjs';
import { createApiKey } from './support/operator-key.ts';
import { createContext } from '../services/core/context.ts';
import { invokeOperation } from '../services/core/operation.ts';
import { systemPrincipal } from '../services/core/principal.ts';
import { newId } from '../services/core/ids.ts';
import { createEntryOp } from '../services/content/entries-write-ops.ts';
import { publishEntryOp } from '../services/content/entries-publish-ops.ts';
import { contentCollections, type EntryDoc } from '../services/content/model.ts';
import { livePacks, readFile } from '../services/export/files.ts';
import { readExportState } from '../services/export/model.ts';
import { median } from './support/median.ts';

const N = Number(process.env.BENCH_EXPORT_ENTRIES ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** BENCH_GC_PROBE=1: the worker runs a full GC every 2 s and reports its live heap (then RSS says little: report the live heap). */
const GC_PROBE = process.env.BENCH_GC_PROBE === '1';
const MB = 1024 * 1024;
const load = () =>
  loadavg()
    .map((v) => v.toFixed(2))
    .join(' ');
const loadAtStart = load();

const stopOwnEngines = await ownEnginesIfAsked();
const world = await startBenchWorld();
const { config } = world;
const key = await createApiKey(world);
const base = await world.app.listen({ port: 0, host: '127.0.0.1' });
const scope = (await world.services.sites.resolve('localhost'))!;
const ctx = createContext(world.services, scope, systemPrincipal('bench seed'), { id: 'bench', ip: '127.0.0.1' });

async function api(method: string, url: string, body?: unknown) {
  const res = await world.app.inject({
    method: method as 'GET',
    url: `/api/manage/v1${url}`,
    headers: { authorization: `Bearer ${key}`, host: 'localhost' },
    payload: body as object,
  });
  if (res.statusCode >= 400) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.statusCode === 204 ? null : res.json();
}

// --- seed N published entries ------------------------------------------------------------------
const seedStarted = performance.now();
const paragraph = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(6);
const first = await invokeOperation(createEntryOp, ctx, {
  title: 'Benchmark entry 0',
  slug: 'bench-0',
  excerpt: 'A short summary of the entry.',
  blocks: {
    version: 1,
    blocks: [
      { type: 'heading', level: 2, text: 'Section' },
      { type: 'paragraph', text: paragraph },
      { type: 'list', items: ['one', 'two', 'three'] },
    ],
  },
});
await invokeOperation(publishEntryOp, ctx, { id: first.id });
const entries = contentCollections(ctx.db).entries;
const template = (await entries.findOne({ _id: first.id }))!;
for (let i = 1; i < N; i += 1000) {
  const docs: EntryDoc[] = [];
  for (let j = i; j < Math.min(N, i + 1000); j++) {
    const title = `Benchmark entry ${j}`;
    const slug = `bench-${j}`;
    docs.push({
      ...template,
      _id: newId(),
      title,
      titleLower: title.toLowerCase(),
      slug,
      live: { ...template.live!, title, titleLower: title.toLowerCase(), slug },
    });
  }
  await entries.insertMany(docs);
}
const seedSec = (performance.now() - seedStarted) / 1000;
process.stderr.write(`seeded ${N} entries in ${seedSec.toFixed(1)} s\n`);

// --- the worker in its own process, its memory sampled ------------------------------------------
const workerFlags = process.env.BENCH_WORKER_NODE_FLAGS === undefined ? WORKER_NODE_FLAGS : process.env.BENCH_WORKER_NODE_FLAGS.split(' ').filter(Boolean);
const worker: ChildProcess = spawn(
  process.execPath,
  [...workerFlags, ...(GC_PROBE ? ['--expose-gc'] : []), '--import', 'tsx', 'bench/support/worker-process.ts'],
  {
    env: { ...process.env, DB_PREFIX: config.DB_PREFIX, TEMPORAL_TASK_QUEUE: config.TEMPORAL_TASK_QUEUE, SECRET_KEY: config.SECRET_KEY, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  },
);
await new Promise<void>((resolve, reject) => {
  let out = '';
  const on = (chunk: Buffer) => {
    out += chunk;
    if (out.includes('worker ready')) resolve();
  };
  worker.stdout!.on('data', on);
  worker.stderr!.on('data', on);
  worker.once('exit', (code) => reject(new Error(`worker exited ${code}: ${out.slice(-2000)}`)));
});
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
let peakRss = 0;
let liveHeap: number[] = [];
worker.stderr!.on('data', (chunk: Buffer) => {
  for (const match of String(chunk).matchAll(/gc-probe heapUsed=(\d+)/g)) liveHeap.push(Number(match[1]));
});
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, rssOf(worker.pid!));
}, 25);

/** Starts a run and waits until the run it queued finished; wall seconds and its summary. */
async function exportRun(mode: 'full' | 'incremental') {
  const started = performance.now();
  const { requestId } = await api('POST', '/static-export/run', { mode });
  let shown = performance.now();
  for (;;) {
    const s = await api('GET', '/static-export');
    if (performance.now() - shown > 5000) {
      shown = performance.now();
      process.stderr.write(
        `  ${mode}: ${s.progress?.phase ?? s.status} ${s.progress?.done ?? '-'}/${s.progress?.total ?? '-'} after ${((shown - started) / 1000).toFixed(0)} s\n`,
      );
    }
    if (s.status === 'idle' && s.lastRun?.requestIds.includes(requestId)) {
      if (s.lastRun.status !== 'succeeded') throw new Error(`run ${s.lastRun.status}: ${s.lastRun.error}`);
      return { seconds: (performance.now() - started) / 1000, run: s.lastRun, output: s.output };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// Settle, then the idle baseline of the worker (it has bundled its workflows and connected).
await new Promise((resolve) => setTimeout(resolve, GC_PROBE ? 4500 : 2000));
const baseRss = rssOf(worker.pid!);
peakRss = baseRss;
const baseHeap = liveHeap.at(-1) ?? 0;
liveHeap = [];
const full = await exportRun('full');
const fullPeak = peakRss;
const fullHeapPeak = Math.max(0, ...liveHeap);

const changed = await entries.findOne({ slug: `bench-${Math.floor(N / 2)}` });
await api('PATCH', `/content/${changed!._id}`, { title: 'Benchmark entry changed' });
await api('POST', `/content/${changed!._id}/publish`);
const incremental = await exportRun('incremental');
clearInterval(sampler);

// --- archive download against the same bytes straight from storage -------------------------------
/** The baseline: every live file's bytes straight from storage (the packs in order, as files.ts reads them), no tar, no HTTP. */
async function fromStorage() {
  const started = performance.now();
  const live = (await readExportState(ctx.db, scope.site._id))!.live!;
  let bytes = 0;
  for await (const pack of livePacks(ctx.db, scope.site._id, live, true)) {
    for (const file of pack.files) {
      if (file.parts.length === 1) bytes += pack.data!.subarray(file.parts[0][1], file.parts[0][1] + file.length).length;
      else for await (const chunk of readFile(ctx.db, file)) bytes += chunk.length;
    }
  }
  return { bytes, ms: performance.now() - started };
}
function download(format: 'tar' | 'tar.gz') {
  return new Promise<{ status: number; bytes: number; ms: number }>((resolve, reject) => {
    const job = JSON.stringify({
      url: `${base}/api/manage/v1/static-export/download?format=${format}`,
      headers: { authorization: `Bearer ${key}`, host: 'localhost' },
    });
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/support/download-process.ts', job], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (chunk) => (out += chunk));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`download exited ${code}`))));
  });
}
const rounds: { grid: number; tar: number; tgz: number; gridBytes: number; tarBytes: number; tgzBytes: number }[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const grid = await fromStorage();
  const tar = await download('tar');
  const tgz = await download('tar.gz');
  if (tar.status !== 200 || tgz.status !== 200) throw new Error(`download answered ${tar.status} / ${tgz.status}`);
  rounds.push({
    grid: grid.bytes / MB / (grid.ms / 1000),
    tar: tar.bytes / MB / (tar.ms / 1000),
    tgz: tgz.bytes / MB / (tgz.ms / 1000),
    gridBytes: grid.bytes,
    tarBytes: tar.bytes,
    tgzBytes: tgz.bytes,
  });
}
const mbps = { grid: median(rounds.map((r) => r.grid)), tar: median(rounds.map((r) => r.tar)), tgz: median(rounds.map((r) => r.tgz)) };

const pagesPerSec = full.run.rendered / full.seconds;
const growthMb = (fullPeak - baseRss) / MB;
const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
console.log(`load average at start: ${loadAtStart}; at end: ${load()}`);
console.log(`worker Node flags: ${workerFlags.join(' ') || '(none)'}`);
console.log(`seeded ${N} published entries in ${seedSec.toFixed(1)} s (not measured)`);
console.log('| measure | value | target |');
console.log('|---|---|---|');
console.log(
  `| full export: ${full.run.rendered} entries (${full.output.files} files, ${(full.output.bytes / MB).toFixed(1)} MB) | ${full.seconds.toFixed(1)} s wall = **${pagesPerSec.toFixed(0)} pages/s** | ≥ 500 pages/s: ${verdict(pagesPerSec >= 500)} |`,
);
console.log(
  `| worker peak RSS growth during the full run | **${growthMb.toFixed(0)} MB** (idle ${(baseRss / MB).toFixed(0)} MB → peak ${(fullPeak / MB).toFixed(0)} MB) | < 128 MB: ${verdict(growthMb < 128)} |`,
);
if (GC_PROBE)
  console.log(
    `| worker live heap after a full GC every 2 s (BENCH_GC_PROBE) | **${((fullHeapPeak - baseHeap) / MB).toFixed(0)} MB** growth (idle ${(baseHeap / MB).toFixed(0)} MB → peak ${(fullHeapPeak / MB).toFixed(0)} MB) | — |`,
  );
console.log(
  `| incremental after one change (${incremental.run.rendered} rendered, ${incremental.run.written} files written) | **${incremental.seconds.toFixed(2)} s** wall | < 3 s: ${verdict(incremental.seconds < 3)} |`,
);
console.log(
  `| straight from storage (${(rounds[0].gridBytes / MB).toFixed(1)} MB, every live file in path order), baseline | ${mbps.grid.toFixed(1)} MB/s | 1.00 |`,
);
console.log(
  `| download tar (${(rounds[0].tarBytes / MB).toFixed(1)} MB, Content-Length) | ${mbps.tar.toFixed(1)} MB/s | ${(mbps.tar / mbps.grid).toFixed(2)} |`,
);
console.log(
  `| download tar.gz (${(rounds[0].tgzBytes / MB).toFixed(1)} MB, chunked) | ${mbps.tgz.toFixed(1)} MB/s of archive | ${(mbps.tgz / mbps.grid).toFixed(2)} |`,
);
console.log(`(median of ${ROUNDS} alternating rounds for the downloads)`);

worker.kill('SIGTERM');
await new Promise((resolve) => worker.once('exit', resolve));
await world.close();
await stopOwnEngines();
process.exit(0);
