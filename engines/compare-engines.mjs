// The queries an entry write and read send, timed on a MongoDB-compatible server at a given size:
// how engines/README.md compares the local engine with FerretDB ("FerretDB 1.24, measured").
//   node engines/compare-engines.mjs mongodb://127.0.0.1:<port> [entries=20000]
// Creates and drops its own database (`compare_engines`).
import { MongoClient } from 'mongodb';

const [uri, sizeArg] = process.argv.slice(2);
if (!uri) {
  console.error('usage: node engines/compare-engines.mjs <mongodb uri> [entries]');
  process.exit(2);
}
const size = Number(sizeArg ?? 20_000);
const client = await MongoClient.connect(uri, { serverSelectionTimeoutMS: 10_000 });
const db = client.db('compare_engines');
await db.dropDatabase();
const entries = db.collection('entries');
await entries.createIndexes([
  { key: { siteId: 1, locale: 1, slug: 1 }, unique: true },
  { key: { siteId: 1, trashedAt: 1, _id: -1 } },
  { key: { siteId: 1, status: 1, locale: 1, _id: -1 } },
  { key: { siteId: 1, 'live.slug': 1 } },
]);
const id = (i) => `e${String(i).padStart(9, '0')}`;
const doc = (i) => ({
  _id: id(i),
  siteId: 'site',
  type: 'post',
  title: `Entry ${i}`,
  slug: `entry-${i}`,
  locale: 'en',
  status: 'published',
  excerpt: 'A short summary of the entry.',
  blocks: { version: 1, blocks: [{ type: 'paragraph', text: 'Lorem ipsum dolor sit amet. '.repeat(8) }] },
  live: { slug: `entry-${i}`, title: `Entry ${i}` },
  version: 1,
  trashedAt: null,
  createdAt: new Date(),
});
let started = performance.now();
for (let from = 0; from < size; from += 1000) {
  await entries.insertMany(Array.from({ length: Math.min(1000, size - from) }, (_, k) => doc(from + k)));
}
const insertSeconds = (performance.now() - started) / 1000;
console.log(`${uri}: ${size} entries inserted in ${insertSeconds.toFixed(1)} s (${Math.round(size / insertSeconds)}/s)`);

async function median(fn, n = 20) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn(i);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(n / 2)].toFixed(2);
}
const pick = (i) => id(Math.floor((i * 7919) % size));
const results = {
  'insertOne (a create)': await median((i) => entries.insertOne(doc(size + i)), 20),
  'findOne { _id, siteId, trashedAt: null } (a get)': await median((i) => entries.findOne({ _id: pick(i), siteId: 'site', trashedAt: null })),
  'findOneAndUpdate { _id, siteId, version } (an update)': await median((i) =>
    entries.findOneAndUpdate({ _id: pick(i), siteId: 'site', trashedAt: null, version: 1 }, { $set: { title: 'x' }, $inc: { version: 1 } }),
  ),
  'list: { siteId, trashedAt: null } sort _id -1 limit 21': await median(() =>
    entries.find({ siteId: 'site', trashedAt: null }).sort({ _id: -1 }).limit(21).toArray(),
  ),
  'public list: { siteId, status, trashedAt, locale } sort _id -1 limit 101, after a cursor': await median((i) =>
    entries
      .find({ siteId: 'site', status: 'published', trashedAt: null, locale: 'en', _id: { $lt: pick(i) } })
      .sort({ _id: -1 })
      .limit(101)
      .toArray(),
  ),
  'by published slug { siteId, live.slug }': await median((i) => entries.findOne({ siteId: 'site', 'live.slug': `entry-${(i * 31) % size}` })),
};
console.log('median ms:');
for (const [name, ms] of Object.entries(results)) console.log(`  ${name.padEnd(90)} ${ms}`);
await db.dropDatabase();
await client.close();
