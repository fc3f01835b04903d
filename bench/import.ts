// Content import throughput (issue 24 item 4): an NDJSON file of BENCH_LINES entries (default
// 100,000) imported through `POST /api/manage/v1/content/import` into an empty site, the job run
// by a Temporal worker in its own process, timed from the POST to the import's `succeeded`; then
// the same file again (every line unchanged). Baseline, same run, same documents: a plain driver
// `insertMany` (1,000 per call) of the entry documents the import creates, into a collection with
// the same indexes, with none of the import's work (no parsing, validation, terms, quota,
// revisions, events, checkpoints). Target: ≥ 2,000 entries/s.
// CPU of the engine, the worker and this process (the gateway) per entry, from Linux /proc.
//   npx tsx bench/import.ts          (engines from MONGODB_URI / TEMPORAL_ADDRESS, else local ones)
//   BENCH_OWN_ENGINES=1 BENCH_MONGO_PORT=28642 BENCH_TEMPORAL_PORT=28643 MONGO_HEAP=3g npx tsx bench/import.ts
//                                    (engines of the run's own in a temporary folder, removed at the end)
// Env: BENCH_LINES (100000), BENCH_RERUN=0 to skip the second run, BENCH_OWN_ENGINES=1, BENCH_CPU_PROF (a
// folder: the worker writes its V8 CPU profile there).
import { spawn, type ChildProcess } from 'node:child_process';
import { ownEnginesIfAsked, startBenchWorld } from './support/world.ts';
import { enginePidOf, processCpuMs } from './support/process-cpu.ts';
import { createApiKey } from './support/operator-key.ts';
import { createContext } from '../services/core/context.ts';
import { systemPrincipal } from '../services/core/principal.ts';
import { newId } from '../services/core/ids.ts';
import { contentCollections, COLLECTIONS, newEntryState, type EntryDoc } from '../services/content/model.ts';
import { contentFeature } from '../services/content/feature.ts';

const N = Number(process.env.BENCH_LINES ?? 100_000);
const stopOwnEngines = await ownEnginesIfAsked();
const world = await startBenchWorld();
const enginePid = enginePidOf();
/** CPU ms spent meanwhile by the engine, the worker (once started) and this process. */
const cpuNow = (workerPid?: number) => ({ engine: processCpuMs(enginePid), workerPid, worker: processCpuMs(workerPid), gateway: process.cpuUsage() });
type Cpu = ReturnType<typeof cpuNow>;
const cpuSince = (from: Cpu) => {
  const gateway = process.cpuUsage(from.gateway);
  return { engine: processCpuMs(enginePid) - from.engine, worker: processCpuMs(from.workerPid) - from.worker, gateway: (gateway.user + gateway.system) / 1000 };
};
const perEntry = (cpu: ReturnType<typeof cpuSince>) =>
  `CPU per entry: engine ${(cpu.engine / N).toFixed(2)} ms, worker ${(cpu.worker / N).toFixed(2)} ms, gateway ${(cpu.gateway / N).toFixed(2)} ms`;
const { services, config } = world;
const key = await createApiKey(world);
const scope = (await services.sites.resolve('localhost'))!;
const ctx = createContext(services, scope, systemPrincipal('bench'), { id: 'bench', ip: '127.0.0.1' });

const line = (i: number) =>
  JSON.stringify({
    type: 'post',
    slug: `bench-${i}`,
    title: `Bench entry ${i}`,
    status: i % 2 === 0 ? 'published' : 'draft',
    excerpt: 'A short summary of the entry.',
    blocks: { version: 1, blocks: [{ type: 'paragraph', text: 'Lorem ipsum dolor sit amet. '.repeat(8) }] },
    terms: { tag: [`tag-${i % 20}`], category: [{ slug: `cat-${i % 8}`, name: `Category ${i % 8}` }] },
  });
const body = `${JSON.stringify({ format: 'content-ndjson', version: 1 })}\n${Array.from({ length: N }, (_, i) => line(i)).join('\n')}\n`;
process.stderr.write(`file: ${N} lines, ${(body.length / 1e6).toFixed(1)} MB\n`);

// --- baseline: the same documents, plain insertMany into a collection with the same indexes -------
const baseline = ctx.db.collection<EntryDoc>('bench_baseline_entries');
for (const index of contentFeature.indexes ?? []) {
  if (index.collection === COLLECTIONS.entries) await baseline.createIndex(index.keys, index.options ?? {});
}
const docsOf = (from: number, to: number): EntryDoc[] => {
  const now = new Date();
  return Array.from({ length: to - from }, (_, k) => {
    const i = from + k;
    const parsed = JSON.parse(line(i));
    const snapshot = {
      title: parsed.title,
      titleLower: parsed.title.toLowerCase(),
      slug: parsed.slug,
      excerpt: parsed.excerpt,
      blocks: parsed.blocks,
      fields: {},
    };
    return {
      _id: newId(now.getTime()),
      siteId: ctx.site._id,
      type: 'post',
      ...snapshot,
      locale: 'en',
      status: parsed.status,
      live: parsed.status === 'published' ? snapshot : null,
      publishedAt: parsed.status === 'published' ? now : null,
      authorId: null,
      terms: { tag: ['t'], category: ['c'] },
      ...newEntryState(now),
    };
  });
};
const baseStarted = performance.now();
const baseCpu0 = cpuNow();
for (let i = 0; i < N; i += 1000) await baseline.insertMany(docsOf(i, Math.min(N, i + 1000)));
const baseSec = (performance.now() - baseStarted) / 1000;
const baseCpu = cpuSince(baseCpu0);
await baseline.drop();
process.stderr.write(`baseline insertMany: ${baseSec.toFixed(1)} s\n`);

// --- the worker in its own process ----------------------------------------------------------------
const worker: ChildProcess = spawn(
  process.execPath,
  [...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []), '--import', 'tsx', 'bench/support/worker-process.ts'],
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

async function runImport(): Promise<{ sec: number; uploadSec: number; view: Record<string, unknown>; cpu: ReturnType<typeof cpuSince> }> {
  const started = performance.now();
  const cpu0 = cpuNow(worker.pid);
  const answer = await world.app.inject({
    method: 'POST',
    url: '/api/manage/v1/content/import',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-ndjson' },
    payload: body,
  });
  if (answer.statusCode !== 202) throw new Error(`import refused: ${answer.statusCode} ${answer.body}`);
  const uploadSec = (performance.now() - started) / 1000;
  for (;;) {
    const view = (
      await world.app.inject({ method: 'GET', url: `/api/manage/v1/content/imports/${answer.json().id}`, headers: { authorization: `Bearer ${key}` } })
    ).json();
    if (!['queued', 'running'].includes(view.state)) return { sec: (performance.now() - started) / 1000, uploadSec, view, cpu: cpuSince(cpu0) };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const first = await runImport();
const again = process.env.BENCH_RERUN === '0' ? null : await runImport();
const stored = await contentCollections(ctx.db).entries.countDocuments({ siteId: ctx.site._id, slug: /^bench-/ });
worker.kill('SIGTERM');
await world.close();
await stopOwnEngines();

const rate = (sec: number) => Math.round(N / sec);
console.log(
  `import of ${N} lines (${(body.length / 1e6).toFixed(1)} MB), load average ${(await import('node:os'))
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
console.log(`| run | seconds | entries/s | figures |`);
console.log(`|---|---|---|---|`);
console.log(`| baseline: driver insertMany of the same documents | ${baseSec.toFixed(1)} | ${rate(baseSec)} | ${perEntry(baseCpu)} |`);
console.log(
  `| import, empty site (upload ${first.uploadSec.toFixed(1)} s included) | ${first.sec.toFixed(1)} | ${rate(first.sec)} | ${JSON.stringify({ state: first.view.state, created: first.view.created, rejected: first.view.rejected })}; ${perEntry(first.cpu)} |`,
);
if (again) {
  console.log(
    `| the same file again (all unchanged) | ${again.sec.toFixed(1)} | ${rate(again.sec)} | ${JSON.stringify({ state: again.view.state, unchanged: again.view.unchanged, created: again.view.created })}; ${perEntry(again.cpu)} |`,
  );
}
console.log(`entries stored: ${stored}; import / baseline time: ${(first.sec / baseSec).toFixed(2)}`);
console.log(`target: import ≥ 2,000 entries/s: ${rate(first.sec)} — ${rate(first.sec) >= 2000 ? 'met' : 'not met'}`);
process.exit(0);
