// The local MongoDB engine's cost per write as a collection grows (issue 24: a driver `insertMany`
// of 100,000 entry documents into a collection with the entries' indexes took 1,638 s, 61/s, where
// the same without indexes took ~58 s). For each size in BENCH_SIZES and each form (the entries'
// indexes as services/content/feature.ts declares them, and no index but `_id`): a fresh database on
// an engine of its own, N entry-shaped documents (the shape bench/import.ts's baseline writes)
// inserted in batches of 1,000, the engine's CPU per insert measured per tenth of the run (Linux
// /proc, so the machine's load barely moves it); then BENCH_WRITES updates by `_id` that move index
// keys (status, trashedAt, version, updatedAt) and as many deletes by `_id`, CPU per write.
// Target: an insert with k indexes costs O(k log n): the last tenth's CPU per insert within 1.5× the
// first tenth's at 100,000, and the indexed/plain ratio the same at every size.
//   npx tsx bench/engine-inserts.ts
// Env: BENCH_SIZES (10000,50000,100000), BENCH_WRITES (2000), BENCH_MONGO_PORT (28640),
//      MONGO_HEAP (3g), BENCH_FORMS (indexed,plain), BENCH_JFR=1 (a flight recording of each run
//      into the temporary folder, kept and named at the end).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MongoClient, type Collection, type IndexSpecification, type CreateIndexesOptions } from 'mongodb';
import { contentFeature } from '../services/content/feature.ts';
import { COLLECTIONS, newEntryState } from '../services/content/model.ts';
import { newId } from '../services/core/ids.ts';
import { installLauncher, startLauncher, stopLauncher } from './support/launcher-engine.ts';
import { processCpuMs as cpuMs } from './support/process-cpu.ts';

const sizes = (process.env.BENCH_SIZES ?? '10000,50000,100000').split(',').map(Number);
const writes = Number(process.env.BENCH_WRITES ?? 2000);
const port = Number(process.env.BENCH_MONGO_PORT ?? 28640);
const heap = process.env.MONGO_HEAP ?? '3g';
const forms = (process.env.BENCH_FORMS ?? 'indexed,plain').split(',') as ('indexed' | 'plain')[];
const jfr = process.env.BENCH_JFR === '1';
const classpath = installLauncher();
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-inserts-'));

const startEngine = (file: string, recording: string | null) =>
  startLauncher(classpath, { port, file, heap, jvm: recording ? [`-XX:StartFlightRecording=filename=${recording},settings=profile`] : [] });

const entryIndexes = (contentFeature.indexes ?? []).filter((index) => index.collection === COLLECTIONS.entries);
const siteId = newId();
const entry = (i: number, now: Date) => {
  const snapshot = {
    title: `Bench entry ${i}`,
    titleLower: `bench entry ${i}`,
    slug: `bench-${i}`,
    excerpt: 'A short summary of the entry.',
    blocks: { version: 1, blocks: [{ type: 'paragraph', text: 'Lorem ipsum dolor sit amet. '.repeat(8) }] },
    fields: {},
  };
  const published = i % 2 === 0;
  return {
    _id: newId(now.getTime()),
    siteId,
    type: i % 3 === 0 ? 'page' : 'post',
    ...snapshot,
    locale: 'en',
    status: published ? 'published' : 'draft',
    live: published ? snapshot : null,
    publishedAt: published ? now : null,
    authorId: null,
    terms: { tag: [`tag-${i % 20}`], category: [`cat-${i % 8}`] },
    ...newEntryState(now),
  };
};
type Entry = ReturnType<typeof entry>;

async function measure(form: 'indexed' | 'plain', n: number) {
  const file = path.join(work, `${form}-${n}.mv.db`);
  const recording = jfr ? path.join(work, `${form}-${n}.jfr`) : null;
  const engine = await startEngine(file, recording);
  const client = await MongoClient.connect(`mongodb://127.0.0.1:${port}`);
  try {
    const entries: Collection<Entry> = client.db('bench').collection<Entry>('content_entries');
    if (form === 'indexed')
      for (const index of entryIndexes) await entries.createIndex(index.keys as IndexSpecification, (index.options ?? {}) as CreateIndexesOptions);
    const tenth = Math.max(1000, Math.ceil(n / 10 / 1000) * 1000);
    const tenths: { cpu: number; ms: number }[] = [];
    const ids: string[] = [];
    let cpu = cpuMs(engine.pid!);
    let wall = performance.now();
    for (let from = 0; from < n; from += 1000) {
      const now = new Date();
      const batch = Array.from({ length: Math.min(1000, n - from) }, (_, k) => entry(from + k, now));
      for (const doc of batch) if (ids.length < writes || (from + batch.indexOf(doc)) % 7 === 0) ids.push(doc._id);
      await entries.insertMany(batch);
      const done = from + batch.length;
      if (done % tenth === 0 || done === n) {
        const cpuNow = cpuMs(engine.pid!);
        const wallNow = performance.now();
        const count = done % tenth === 0 ? tenth : done % tenth;
        tenths.push({ cpu: (cpuNow - cpu) / count, ms: (wallNow - wall) / count });
        cpu = cpuNow;
        wall = wallNow;
      }
    }
    // Writes spread over the collection (every seventh id from the whole run, the first ones too).
    const targets = ids.filter((_, k) => k % Math.max(1, Math.floor(ids.length / writes)) === 0).slice(0, writes);
    let cpu0 = cpuMs(engine.pid!);
    let wall0 = performance.now();
    for (const [k, _id] of targets.entries())
      await entries.updateOne(
        { _id },
        { $set: { status: k % 2 ? 'draft' : 'published', updatedAt: new Date(), trashedAt: k % 5 ? null : new Date() }, $inc: { version: 1 } },
      );
    const update = { cpu: (cpuMs(engine.pid!) - cpu0) / targets.length, ms: (performance.now() - wall0) / targets.length };
    cpu0 = cpuMs(engine.pid!);
    wall0 = performance.now();
    for (const _id of targets) await entries.deleteOne({ _id });
    const remove = { cpu: (cpuMs(engine.pid!) - cpu0) / targets.length, ms: (performance.now() - wall0) / targets.length };
    const stored = await entries.estimatedDocumentCount();
    if (stored !== n - targets.length) throw new Error(`${form} ${n}: ${stored} documents left, expected ${n - targets.length}`);
    return { form, n, indexes: form === 'indexed' ? entryIndexes.length : 0, tenths, update, remove, writes: targets.length };
  } finally {
    await client.close();
    await stopLauncher(engine);
    fs.rmSync(file, { force: true });
  }
}

const load = () => os.loadavg()[0]!.toFixed(1);
const startLoad = load();
const results = [];
for (const n of sizes)
  for (const form of forms) {
    const result = await measure(form, n);
    results.push(result);
    const per = (t: { cpu: number; ms: number }) => `${t.cpu.toFixed(3)} ms CPU (${t.ms.toFixed(3)} ms wall)`;
    process.stderr.write(
      `${form} ${n}: insert first tenth ${per(result.tenths[0]!)}, last tenth ${per(result.tenths.at(-1)!)}; ` +
        `update ${per(result.update)}, delete ${per(result.remove)}; load ${load()}\n` +
        `  CPU ms per insert by tenth: ${result.tenths.map((t) => t.cpu.toFixed(3)).join(' ')}; wall: ${result.tenths.map((t) => t.ms.toFixed(3)).join(' ')}\n`,
    );
  }
console.log(`engine inserts, sizes ${sizes.join(', ')}, load average ${startLoad} at the start, ${load()} at the end (engine on ${port}, -Xmx${heap})`);
console.log('form     size     indexes  insert CPU ms (first tenth → last tenth)  growth  update CPU ms  delete CPU ms  insert wall ms');
for (const r of results) {
  const first = r.tenths[0]!.cpu;
  const last = r.tenths.at(-1)!.cpu;
  const wall = r.tenths.reduce((sum, t) => sum + t.ms, 0) / r.tenths.length;
  console.log(
    `${r.form.padEnd(8)} ${String(r.n).padStart(7)}  ${String(r.indexes).padStart(7)}  ${first.toFixed(3).padStart(8)} → ${last.toFixed(3).padEnd(26)} ×${(last / first).toFixed(2).padEnd(5)} ${r.update.cpu.toFixed(3).padStart(13)}  ${r.remove.cpu.toFixed(3).padStart(13)}  ${wall.toFixed(3).padStart(14)}`,
  );
}
const biggest = Math.max(...sizes);
const big = results.find((r) => r.form === 'indexed' && r.n === biggest);
if (big) {
  const growth = big.tenths.at(-1)!.cpu / big.tenths[0]!.cpu;
  console.log(`target: indexed insert CPU, last tenth / first tenth at ${biggest} ≤ 1.5: ×${growth.toFixed(2)} — ${growth <= 1.5 ? 'met' : 'not met'}`);
  const plain = results.find((r) => r.form === 'plain' && r.n === biggest);
  if (plain) {
    const mean = (r: typeof big) => r.tenths.reduce((sum, t) => sum + t.cpu, 0) / r.tenths.length;
    console.log(`indexed / plain insert CPU at ${biggest}: ×${(mean(big) / mean(plain)).toFixed(2)} (${big.indexes} indexes)`);
  }
}
if (jfr) console.log(`flight recordings kept in ${work}`);
else fs.rmSync(work, { recursive: true, force: true });
