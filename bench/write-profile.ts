// Where a grown entry (create + publish through the Management API) spends its round trips: the
// MongoDB commands each entry sends, counted and timed with the driver's command monitoring, by
// database, command and collection; sequential, then 8 concurrent clients (in this process), with
// the CPU per entry of this process and of the local engine (ENGINE_PID, from /proc).
// The default site's workspace of a fixed database prefix is seeded once to SIZE entries (bulk,
// as bench/big-workspace.ts seeds) and reused by the next runs against the same engine.
//   MONGODB_URI=mongodb://127.0.0.1:<port> TEMPORAL_ADDRESS=127.0.0.1:<port> ENGINE_PID=<pid> npx tsx bench/write-profile.ts
// Env: SIZE (1000), SEQ (50 sequential entries), GROW (200 entries by 8 clients; 0: none), PREFIX (wp_).
import fs from 'node:fs';
import type { Db } from 'mongodb';
import { startBenchWorld } from './support/world.ts';
import { createApiKey } from './support/operator-key.ts';
import { callJson } from './support/http-call.ts';
import { newId } from '../services/core/ids.ts';
import { contentCollections, type EntryDoc } from '../services/content/model.ts';
import { ENTRY_COUNTS_ID } from '../services/content/entry-counts.ts';
import { SITE_STATE_COLLECTION } from '../services/core/site-state.ts';
import { closeServices } from '../services/core/services.ts';

const size = Number(process.env.SIZE ?? 1000);
const world = await startBenchWorld({
  monitorCommands: true,
  env: { DB_PREFIX: process.env.PREFIX ?? 'wp_', SECRET_KEY: 'a'.repeat(64), ADMIN_EMAIL: 'wp@example.test', ADMIN_PASSWORD: 'correct horse battery staple' },
});
const { services } = world;
const address = await world.app.listen({ port: 0, host: '127.0.0.1' });
const key = await createApiKey(world, { host: 'localhost', email: 'wp@example.test' });
const scope = (await services.sites.resolve('localhost'))!;
const db: Db = services.workspaceDb(scope.workspace);
const siteId = scope.site._id;
const headers = { host: 'localhost', authorization: `Bearer ${key}` };
let serial = Date.now();
const input = () => ({
  title: `Bench ${serial}`,
  slug: `bench-${serial++}`,
  excerpt: 'A short summary of the entry.',
  blocks: { version: 1, blocks: [{ type: 'paragraph', text: 'Lorem ipsum dolor sit amet. '.repeat(8) }] },
  fields: { rank: serial },
});
const { entries, revisions } = contentCollections(db);
const have = await entries.countDocuments({});
if (have < size) {
  const created = await callJson(address, 'POST', '/api/manage/v1/content', headers, input());
  await callJson(address, 'POST', `/api/manage/v1/content/${String(created.body.id)}/publish`, headers, {});
  const template = (await entries.findOne({ _id: String(created.body.id) }))!;
  const templateRevisions = await revisions.find({ entryId: template._id }).toArray();
  const count = size - have;
  const oldest = template.createdAt.getTime() - count * 1000;
  for (let from = 0; from < count; from += 1000) {
    const docs: EntryDoc[] = [];
    for (let i = from; i < Math.min(count, from + 1000); i++) {
      const at = new Date(oldest + i * 1000);
      const slug = `seeded-${have}-${i}`;
      const title = `Seeded entry ${i}`;
      const live = template.live ? { ...template.live, slug, title, titleLower: title.toLowerCase() } : null;
      docs.push({ ...template, _id: newId(at.getTime()), slug, title, titleLower: title.toLowerCase(), live, createdAt: at, updatedAt: at, publishedAt: at });
    }
    await entries.insertMany(docs, { ordered: false });
    await revisions.insertMany(
      docs.flatMap((doc) => templateRevisions.map((r) => ({ ...r, _id: `${doc._id}:${r.version}`, entryId: doc._id, slug: doc.slug, title: doc.title }))),
      { ordered: false },
    );
  }
  await db
    .collection<{ _id: string }>(SITE_STATE_COLLECTION)
    .updateOne({ _id: ENTRY_COUNTS_ID }, { $inc: { total: count, [`sites.${siteId}`]: count } }, { upsert: true });
  console.log(`seeded ${count}`);
}

// command log
interface Cmd {
  name: string;
  coll: string;
  ms: number;
  db: string;
}
let log: Cmd[] = [];
const started = new Map<number, { name: string; coll: string; db: string }>();
services.mongo.on('commandStarted', (e) => started.set(e.requestId, { name: e.commandName, coll: String(e.command[e.commandName] ?? ''), db: e.databaseName }));
services.mongo.on('commandSucceeded', (e) => {
  const s = started.get(e.requestId);
  if (s) log.push({ ...s, ms: e.duration });
});
const enginePid = Number(process.env.ENGINE_PID ?? 0);
const engineCpu = () => {
  if (!enginePid) return 0;
  const stat = fs.readFileSync(`/proc/${enginePid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};
async function one(): Promise<void> {
  const c = await callJson(address, 'POST', '/api/manage/v1/content', headers, input());
  if (c.status !== 201) throw new Error(JSON.stringify(c));
  const p = await callJson(address, 'POST', `/api/manage/v1/content/${String(c.body.id)}/publish`, headers, {});
  if (p.status !== 200) throw new Error(JSON.stringify(p));
}
for (let i = 0; i < 20; i++) await one();
await new Promise((r) => setTimeout(r, 500));
log = [];
const seqN = Number(process.env.SEQ ?? 50);
let t0 = performance.now();
let cpu0 = process.cpuUsage();
let e0 = engineCpu();
for (let i = 0; i < seqN; i++) await one();
let wall = performance.now() - t0;
let cpu = process.cpuUsage(cpu0);
console.log(
  `sequential ${seqN}: ${(wall / seqN).toFixed(1)} ms per entry; gateway CPU ${((cpu.user + cpu.system) / 1000 / seqN).toFixed(1)} ms, engine ${((engineCpu() - e0) / seqN).toFixed(1)} ms`,
);
function report(n: number) {
  const agg = new Map<string, { n: number; ms: number }>();
  for (const c of log) {
    const k = `${c.db.replace(/^wp_/, '')} ${c.name} ${c.coll}`;
    const a = agg.get(k) ?? { n: 0, ms: 0 };
    a.n++;
    a.ms += c.ms;
    agg.set(k, a);
  }
  console.log(`commands per entry: ${(log.length / n).toFixed(2)}`);
  for (const [k, a] of [...agg].sort((x, y) => y[1].ms - x[1].ms))
    console.log(`  ${(a.n / n).toFixed(2)} x ${k}: ${(a.ms / a.n).toFixed(2)} ms avg, ${(a.ms / n).toFixed(2)} ms/entry`);
}
report(seqN);
const growN = Number(process.env.GROW ?? 200);
if (growN > 0) {
  let next = 0;
  log = [];
  t0 = performance.now();
  cpu0 = process.cpuUsage();
  e0 = engineCpu();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next++ < growN) await one();
    }),
  );
  wall = performance.now() - t0;
  cpu = process.cpuUsage(cpu0);
  console.log(
    `grow 8 clients (in-process client) ${growN}: ${(growN / (wall / 1000)).toFixed(0)} entries/s; gateway+client CPU ${((cpu.user + cpu.system) / 1000 / growN).toFixed(1)} ms, engine ${((engineCpu() - e0) / growN).toFixed(1)} ms per entry`,
  );
  report(growN);
}
await world.app.close();
await services.changeFeed.stop();
await closeServices(services);
process.exit(0);
