// The local MongoDB engine's cost per document read (issue 24: the uncached crawl's bound), the
// launcher's BSON document storage against H2's default Java serialization (`--values legacy`,
// the baseline) in the same run. For each: a fresh data file seeded with BENCH_DOCS entry-shaped
// documents (≈1.5 KB: title, excerpt, four blocks, fields, terms, dates) through the driver, the
// engine restarted (so the first crawl reads pages from the file, as a crawl of a big workspace
// does), then the collection crawled twice in pages of 100 by an index (`_id < last`, newest
// first) as the public list reads it: cold (pages from the file), then warm (MVStore's cache).
// Measured: the engine process's CPU per page (Linux /proc, so the machine's load barely moves
// it), entries/s, the data file's size. Engines of its own on ports 27941/27942.
//   npx tsx bench/engine-documents.ts         Env: BENCH_DOCS (100000)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { installLauncher, startLauncher, stopLauncher } from './support/launcher-engine.ts';
import { processCpuMs as cpuMs } from './support/process-cpu.ts';

const docs = Number(process.env.BENCH_DOCS ?? 100_000);
const classpath = installLauncher();
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-documents-'));

const startEngine = (mode: 'bson' | 'legacy', port: number, file: string) => startLauncher(classpath, { port, file, args: ['--values', mode] });
const words = (n: number, seed: number) => Array.from({ length: n }, (_, k) => `word${(seed * 7 + k * 13) % 997}`).join(' ');
const entry = (i: number) => ({
  _id: `e${String(i).padStart(9, '0')}`,
  siteId: 'site',
  type: 'post',
  title: words(5, i),
  slug: `entry-${i}`,
  locale: 'en',
  status: 'published',
  trashedAt: null,
  excerpt: words(20, i),
  blocks: {
    version: 1,
    items: [
      { id: 'a', type: 'heading', data: { text: words(6, i), level: 2 } },
      { id: 'b', type: 'paragraph', data: { text: words(60, i) } },
      { id: 'c', type: 'list', data: { style: 'ordered', items: [words(5, i), words(5, i + 1), words(5, i + 2)] } },
      { id: 'd', type: 'paragraph', data: { text: words(60, i + 3) } },
    ],
  },
  fields: { subtitle: words(4, i), rating: i % 5 },
  terms: { category: ['c1'], tag: ['t1', 't2'] },
  authorId: 'u1',
  createdAt: new Date(),
  updatedAt: new Date(),
  publishedAt: new Date(),
  version: 3,
});

async function measure(mode: 'bson' | 'legacy', port: number) {
  const file = path.join(work, `${mode}.mv.db`);
  let engine = await startEngine(mode, port, file);
  let client = await MongoClient.connect(`mongodb://127.0.0.1:${port}`);
  let entries = client.db('ws').collection<ReturnType<typeof entry>>('entries');
  await entries.createIndex({ siteId: 1, status: 1, trashedAt: 1, locale: 1, _id: -1 });
  const seedCpu = cpuMs(engine.pid!);
  for (let from = 0; from < docs; from += 1000) await entries.insertMany(Array.from({ length: Math.min(1000, docs - from) }, (_, k) => entry(from + k)));
  const insertCpuPerDoc = (cpuMs(engine.pid!) - seedCpu) / docs;
  await client.close();
  await stopLauncher(engine);
  engine = await startEngine(mode, port, file);
  client = await MongoClient.connect(`mongodb://127.0.0.1:${port}`);
  entries = client.db('ws').collection('entries');
  await entries.findOne({ siteId: 'site', status: 'published', trashedAt: null, locale: 'en' }); // the index is built at the first query
  const crawls = [];
  for (const pass of ['cold', 'warm']) {
    const cpu0 = cpuMs(engine.pid!);
    const started = performance.now();
    let last: string | null = null;
    let read = 0;
    let pages = 0;
    for (;;) {
      const page = await entries
        .find({ siteId: 'site', status: 'published', trashedAt: null, locale: 'en', ...(last ? { _id: { $lt: last } } : {}) })
        .sort({ _id: -1 })
        .limit(101)
        .toArray();
      pages += 1;
      read += Math.min(100, page.length);
      if (page.length <= 100) break;
      last = page[99]!._id;
    }
    const seconds = (performance.now() - started) / 1000;
    crawls.push({ pass, read, cpuPerPage: (cpuMs(engine.pid!) - cpu0) / pages, perSecond: read / seconds });
  }
  await client.close();
  await stopLauncher(engine);
  return { mode, fileMb: fs.statSync(file).size / 1e6, insertCpuPerDoc, crawls };
}

const legacy = await measure('legacy', 27941);
const bson = await measure('bson', 27942);
fs.rmSync(work, { recursive: true, force: true });
console.log(`engine documents, ${docs} entries, load average ${os.loadavg()[0]!.toFixed(1)}`);
for (const run of [legacy, bson]) {
  console.log(`  ${run.mode.padEnd(6)} file ${run.fileMb.toFixed(1)} MB, insert ${run.insertCpuPerDoc.toFixed(3)} ms engine CPU per document`);
  for (const crawl of run.crawls)
    console.log(`         crawl ${crawl.pass}: ${crawl.cpuPerPage.toFixed(1)} ms engine CPU per page of 100, ${Math.round(crawl.perSecond)} entries/s`);
}
const ratio = (pick: (run: typeof bson) => number) => (pick(bson) / pick(legacy)).toFixed(2);
console.log(
  `  bson / legacy: file ${ratio((r) => r.fileMb)}, insert CPU ${ratio((r) => r.insertCpuPerDoc)}, cold page CPU ${ratio((r) => r.crawls[0]!.cpuPerPage)}, warm page CPU ${ratio((r) => r.crawls[1]!.cpuPerPage)}`,
);
