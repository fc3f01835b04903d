// Moving a workspace to another cluster (issue 25 item 4): a workspace of N entries and M MB of
// media moves from the default engine to a second one while a writer (new entries through the
// Management API, one request at a time) and a reader (lists) run. Reports the copy's throughput,
// the switch's refused-write window as the move measured it and where its time went, what the
// writer saw (refusals, the longest time between two accepted writes), lost writes and failed
// reads (target: none; window ≤ 5 s). docs/placement.md.
//   BENCH_MOVE_ENTRIES=20000 BENCH_MOVE_MEDIA_MB=100 npx tsx bench/move.ts
// The second engine: BENCH_SECOND_URI (default: a local engine on 127.0.0.1:27617, started if needed
// with its data in /tmp/placement-mongo2). MONGODB_URI / TEMPORAL_ADDRESS as the other benchmarks.
import { loadavg } from 'node:os';
import { MongoClient } from 'mongodb';
import { ensureEngines } from '../scripts/engines.mjs';
import { startBenchWorld } from './support/world.ts';
import { createApiKey } from './support/operator-key.ts';
import { seedBulk } from './support/seed-bulk.ts';
import { createWorker, followPlacement } from '../services/worker-factory.ts';
import { platformCollections } from '../services/tenancy/platform-db.ts';
import { moveCollections } from '../services/platform/placement/model.ts';

const N = Number(process.env.BENCH_MOVE_ENTRIES ?? 20_000);
const MEDIA_MB = Number(process.env.BENCH_MOVE_MEDIA_MB ?? 100);
const load = () =>
  loadavg()
    .map((v) => v.toFixed(2))
    .join(' ');
const loadAtStart = load();

const secondUri = process.env.BENCH_SECOND_URI ?? 'mongodb://127.0.0.1:27617';
if (!process.env.BENCH_SECOND_URI) {
  await ensureEngines({ dataDir: '/tmp/placement-mongo2', engineDir: '/work/main/.engines', mongoPort: 27617, temporal: false, log: () => undefined });
}
const world = await startBenchWorld({ env: { MONGODB_CLUSTERS: `second=${secondUri}` } });
const { services } = world;
await followPlacement(services);
const worker = await createWorker(services);
const running = worker.worker.run();
const key = await createApiKey(world);

async function api(method: string, url: string, body?: unknown) {
  return world.app.inject({
    method: method as 'GET',
    url: `/api/manage/v1${url}`,
    headers: { authorization: `Bearer ${key}`, host: 'localhost' },
    payload: body as object,
  });
}

// --- the workspace moved: the platform's own (its key writes through the API), seeded by the driver
const local = (await services.sites.resolve('localhost'))!;
const workspace = local.workspace;
const db = services.mongo.db(workspace.dbName);
const seedSeconds = await seedBulk(db, local.site._id, N, MEDIA_MB);
process.stderr.write(`seeded ${N} entries and ${MEDIA_MB} MB of media in ${seedSeconds.toFixed(1)} s\n`);

// --- the move, with a writer and a reader running ------------------------------------------------
const answers: { status: number; id?: string; at: number }[] = [];
let readFailures = 0;
let reads = 0;
let stop = false;
const writer = (async () => {
  for (let i = 0; !stop; i++) {
    const res = await api('POST', '/content', { title: `During ${i}`, status: 'draft' });
    answers.push({ status: res.statusCode, id: res.statusCode === 201 ? res.json().id : undefined, at: performance.now() });
  }
})();
const reader = (async () => {
  while (!stop) {
    const res = await api('GET', '/content?limit=5');
    if (res.statusCode !== 200) readFailures++;
    reads++;
  }
})();
while (answers.length < 5) await new Promise((r) => setTimeout(r, 20));
const started = performance.now();
const begun = await api('POST', `/tenants/${workspace._id}/move`, { cluster: 'second' });
if (begun.statusCode !== 202) throw new Error(`move: ${begun.statusCode} ${begun.body}`);
const moveId = begun.json().move.id;
let move;
const pollAnswers: Record<number, number> = {};
for (;;) {
  const res = await api('GET', `/tenants/${workspace._id}/moves/${moveId}`);
  pollAnswers[res.statusCode] = (pollAnswers[res.statusCode] ?? 0) + 1;
  if (res.statusCode !== 200) process.stderr.write(`poll: ${res.statusCode} ${res.body}\n`);
  else if ((move = res.json().move).state !== 'running') break;
  await new Promise((r) => setTimeout(r, 200));
}
const movedSec = (performance.now() - started) / 1000;
const after = answers.length;
while (answers.length < after + 5) await new Promise((r) => setTimeout(r, 20));
stop = true;
await Promise.all([writer, reader]);

const second = new MongoClient(secondUri);
const target = second.db(workspace.dbName);
const accepted = answers.filter((a) => a.status === 201);
const stored = new Set(
  (
    await target
      .collection('content_entries')
      .find({ title: /^During / }, { projection: { _id: 1 } })
      .toArray()
  ).map((d) => String(d._id)),
);
const lost = accepted.filter((a) => !stored.has(a.id!)).length;
const refused = answers.filter((a) => a.status === 423).length;
const other = answers.filter((a) => a.status !== 201 && a.status !== 423).length;
const longestGapMs = Math.max(...accepted.slice(1).map((a, i) => a.at - accepted[i]!.at));
const row = await moveCollections(services).moves.findOne({ _id: moveId });
const placed = await platformCollections(services).workspaces.findOne({ _id: workspace._id });

console.log(
  JSON.stringify(
    {
      entries: N,
      mediaMb: MEDIA_MB,
      move: {
        state: move.state,
        error: move.error,
        seconds: +movedSec.toFixed(1),
        documents: move.progress.documents,
        catchUpPasses: move.progress.catchUpPasses,
        changesApplied: move.progress.changesApplied,
      },
      copyMBps: +((MEDIA_MB + (N * 1.1) / 1024) / movedSec).toFixed(1),
      refusedWritesMs: move.refusedWritesMs,
      switchTimings: row?.switchTimings,
      writer: { accepted: accepted.length, refused, other, lost, longestGapMs: Math.round(longestGapMs) },
      reader: { reads, failed: readFailures },
      polls: pollAnswers,
      cluster: placed?.cluster,
      load: { start: loadAtStart, end: load() },
    },
    null,
    1,
  ),
);

// Cleanup: the moved database lives on the second engine now.
await target.dropDatabase();
await second.close();
stop = true;
await worker.recovery.stop();
worker.worker.shutdown();
await running.catch(() => undefined);
await worker.connection.close();
await world.close();
process.exit(0);
