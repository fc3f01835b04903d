// Search at 100,000 entries (issue 24, item 3): p50/p95 of `GET /api/v1/search` (the Public API,
// cache off so every request runs the search) and of the Management list's `search`, against a
// baseline in the same run: one published entry by slug (`GET /api/v1/content/{slug}`, the same
// runner, cache off) and a Management get by id. Sequential requests (latency, not throughput),
// in process through Fastify's `inject` (each with its own client address: search keeps its
// per-IP limit), the kinds of query alternating so drift hits all alike.
// Queries: a rare word, a common word (in ~1 entry of 4), two words, a three-letter prefix
// (search as you type), two words and a prefix, a type filter.
// Seeding (fast, documented in bench/RESULTS.md): entries and their postings are written with the
// driver in batches (`insertMany`), the postings computed by the function the write path uses
// (`postingsOf`: words, kept prefixes, the entry's row of counted words) and the words' frequency rows
// counted per batch (`countFrequencies`), then the kept entry counter is recounted; 1 entry in 10
// is a draft, 1 in 10 a page.
// Target: search p95 ≤ 20 ms at 100,000 entries.
//   npx tsx bench/search.ts     (engines from MONGODB_URI / TEMPORAL_ADDRESS, else local ones)
// Env: BENCH_ENTRIES (100000), BENCH_QUERIES (30 per kind), BENCH_OWN_ENGINES=1 (an engine of its own),
// BENCH_KEEP=1 (the seeded workspace is kept, under the database prefix `bsearch<entries>_`, and a
// later run against the same engine measures it again without seeding: seeding 100,000 entries
// takes the longest part of a run; drop those databases by hand when done).
// The first request is timed on its own: with the engine just started, it shows whether the
// engine's indexes are ready (engines/README.md).
//   BENCH_KEEP=1 MONGODB_URI=... TEMPORAL_ADDRESS=... npx tsx bench/search.ts
import { startBenchWorld, ownEnginesIfAsked } from './support/world.ts';
import { createSiteResolver } from '../services/tenancy/site-resolver.ts';
import { newId } from '../services/core/ids.ts';
import { contentCollections, newEntryState, type EntryDoc } from '../services/content/model.ts';
import { snapshotOf } from '../services/content/entries.ts';
import { countFrequencies, postingsOf, searchTerms } from '../services/content/search-index.ts';
import { reconcileEntryCounts } from '../services/content/entry-counts.ts';
import { configurePublicCache } from '../services/public-read/state.ts';
import { createApiKey } from '../test/support/access.ts';
import type { World } from '../test/support/world.ts';
import { CAPABILITIES } from '../services/core/capabilities.ts';

const total = Number(process.env.BENCH_ENTRIES ?? 100_000);
const perKind = Number(process.env.BENCH_QUERIES ?? 30);

const keep = process.env.BENCH_KEEP === '1';
const stopOwnEngines = await ownEnginesIfAsked();
// A kept workspace keeps its administrator too: the same address on every run.
const keptAdmin = 'bench-search@example.test';
const world = await startBenchWorld(keep ? { keepData: true, env: { DB_PREFIX: `bsearch${total}_`, ADMIN_EMAIL: keptAdmin } } : {});
const { services, app } = world;
configurePublicCache(services, { enabled: false });
const scope = (await createSiteResolver(services).resolve('localhost'))!;
const db = services.workspaceDb(scope.workspace);
const siteId = scope.site._id;

// A vocabulary of 20,000 made-up words, drawn by a Zipf law (word k with weight 1/k): a few words
// are in most entries, most words in a handful, as in real text.
let seed = 42;
const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ba', 'de', 'fi', 'go', 'ha', 'ju', 'pe', 'qui', 'ro', 'su', 'ta', 'zen'];
const vocabulary = Array.from({ length: 20_000 }, (_, k) => {
  let word = '';
  for (let n = k + 1, i = 0; i < 3 || n > 0; i++, n = Math.floor(n / SYLLABLES.length)) word += SYLLABLES[n % SYLLABLES.length];
  return word;
});
const harmonic: number[] = [];
vocabulary.reduce((sum, _w, k) => (harmonic[k] = sum + 1 / (k + 1)), 0);
const draw = () => {
  const target = random() * harmonic[harmonic.length - 1];
  let lo = 0;
  let hi = harmonic.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (harmonic[mid] < target) lo = mid + 1;
    else hi = mid;
  }
  return vocabulary[lo];
};
const words = (n: number) => Array.from({ length: n }, draw).join(' ');

function entry(i: number): EntryDoc {
  const now = new Date(Date.now() - (total - i) * 1000);
  const title = `${words(4)} ${i}`;
  const doc: EntryDoc = {
    _id: newId(now.getTime()),
    siteId,
    type: i % 10 === 3 ? 'page' : 'post',
    title,
    titleLower: title.toLowerCase(),
    slug: `entry-${i}`,
    locale: 'en',
    status: i % 10 === 7 ? 'draft' : 'published',
    excerpt: words(6),
    blocks: { version: 1, blocks: [{ type: 'paragraph', text: words(12) }] },
    fields: {},
    live: null,
    publishedAt: null,
    authorId: null,
    terms: {},
    ...newEntryState(now),
  };
  if (doc.status === 'published') Object.assign(doc, { live: snapshotOf(doc), publishedAt: now });
  return doc;
}

const started = performance.now();
const { entries } = contentCollections(db);
const postings = searchTerms(db);
let postingCount = 0;
const BATCH = 2000;
// A kept workspace (BENCH_KEEP=1) is seeded once; the text is the same whatever the run (seeded random).
const seeded = keep ? await entries.countDocuments({ siteId }) : 0;
if (seeded === total) {
  postingCount = await postings.estimatedDocumentCount();
  for (let i = 0; i < total * 22; i++) random(); // 22 words an entry: the query words drawn below stay those of a seeding run
}
for (let from = seeded === total ? total : 0; from < total; from += BATCH) {
  const docs = Array.from({ length: Math.min(BATCH, total - from) }, (_, k) => entry(from + k));
  const rows = docs.flatMap(postingsOf);
  postingCount += rows.length;
  await Promise.all([entries.insertMany(docs, { ordered: false }), postings.insertMany(rows, { ordered: false }), countFrequencies(db, [], rows)]);
  if ((from / BATCH) % 10 === 0) process.stdout.write(`\rseeded ${from + docs.length} entries, ${postingCount} postings`);
}
await reconcileEntryCounts(db);
const seedSeconds = (performance.now() - started) / 1000;
console.log(`\nseeded ${total} entries and ${postingCount} postings in ${seedSeconds.toFixed(0)} s`);

const key = (await createApiKey(world as unknown as World, { capabilities: [...CAPABILITIES], ...(keep ? { ownerEmail: keptAdmin } : {}) })).key;
const middle = await entries.findOne({ siteId, slug: `entry-${Math.floor(total / 2) + 1}` });
const common = vocabulary[3];
const rare = vocabulary[5000];
let address = 0;
const nextIp = () => `10.${(address >> 16) & 255}.${(address >> 8) & 255}.${address++ & 255}`;

type Kind = { name: string; url: () => string; manage?: boolean };
const pick = () => vocabulary[Math.floor(random() * 2000) + 20];
const kinds: Kind[] = [
  { name: 'baseline: public entry by slug', url: () => `/api/v1/content/entry-${Math.floor((random() * total) / 10) * 10}` },
  { name: 'baseline: manage get by id', url: () => `/api/manage/v1/content/${middle!._id}`, manage: true },
  { name: `search: a rare word ("${rare}")`, url: () => `/api/v1/search?q=${rare}` },
  { name: 'search: a mid-frequency word', url: () => `/api/v1/search?q=${pick()}%20` },
  { name: `search: a common word ("${common}", whole)`, url: () => `/api/v1/search?q=${common}%20` },
  { name: 'search: two words', url: () => `/api/v1/search?q=${vocabulary[Math.floor(random() * 50)]}%20${pick()}%20` },
  { name: 'search: a 3-letter prefix', url: () => `/api/v1/search?q=${pick().slice(0, 3)}` },
  { name: 'search: a word and a prefix', url: () => `/api/v1/search?q=${vocabulary[Math.floor(random() * 50)]}%20${pick().slice(0, 4)}` },
  { name: 'search: a word, type=page', url: () => `/api/v1/search?q=${pick()}%20&type=page` },
  {
    name: 'manage: list search, word and prefix',
    url: () => `/api/manage/v1/content?search=${vocabulary[Math.floor(random() * 50)]}%20${pick().slice(0, 4)}`,
    manage: true,
  },
];

const times = new Map<string, number[]>(kinds.map((kind) => [kind.name, []]));
const found = new Map<string, number[]>(kinds.map((kind) => [kind.name, []]));
// The first search after the service (and maybe the engine) started: an engine that built its
// indexes on first use made it wait for that build (engines/README.md).
const firstStarted = performance.now();
const first = await run(kinds[4]);
console.log(`first request (${kinds[4].name}): ${first.statusCode} in ${(performance.now() - firstStarted).toFixed(0)} ms`);
// Warm-up: the JIT, the connection pool, the engine's caches.
for (const kind of kinds) for (let i = 0; i < 5; i++) await run(kind);
for (let round = 0; round < perKind; round++) {
  for (const kind of kinds) {
    const t0 = performance.now();
    const res = await run(kind);
    times.get(kind.name)!.push(performance.now() - t0);
    if (res.statusCode !== 200) throw new Error(`${kind.name}: ${res.statusCode} ${res.body}`);
    const body = res.json();
    found.get(kind.name)!.push((body.items ?? body.data ?? [body]).length);
  }
}

async function run(kind: Kind) {
  return app.inject({
    method: 'GET',
    url: kind.url(),
    remoteAddress: nextIp(),
    headers: kind.manage ? { authorization: `Bearer ${key}` } : {},
  });
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};
console.log(`\n${total} entries (${postingCount} postings), ${perKind} requests per kind, sequential, public cache off\n`);
console.log('| request | p50 ms | p95 ms | mean items answered |');
console.log('|---|---|---|---|');
for (const kind of kinds) {
  const t = times.get(kind.name)!;
  const n = found.get(kind.name)!;
  console.log(`| ${kind.name} | ${percentile(t, 50).toFixed(1)} | ${percentile(t, 95).toFixed(1)} | ${(n.reduce((a, b) => a + b, 0) / n.length).toFixed(1)} |`);
}
const searches = kinds.filter((kind) => !kind.name.startsWith('baseline'));
const worst = Math.max(...searches.map((kind) => percentile(times.get(kind.name)!, 95)));
console.log(
  `\ntarget: search p95 <= 20 ms at 100,000 entries: worst kind ${worst.toFixed(1)} ms at ${total} entries: ${worst <= 20 && total >= 100_000 ? 'met' : 'not met'}`,
);

await world.close();
await stopOwnEngines();
