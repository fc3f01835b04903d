// The local MongoDB engine's reads and writes by a long list of ids (session 19: a gateway starting
// during a burst of writes acknowledges its backlog of changes, thousands of them, in one
// `updateMany({ _id: { $in: ids } })`, core/change-feed.ts). On an engine of its own, BENCH_IDS
// documents with ObjectId ids; then, for the same ids: one `updateMany` by the whole list, one
// `find` by the list with a filter on another field, and the baseline in the same run, a `bulkWrite`
// of one `updateOne` by `_id` per id (what the list is worth without it). The engine's CPU per
// document from /proc, and the list's cost against the baseline's.
//   npx tsx bench/engine-id-lists.ts
// Env: BENCH_IDS (8000), BENCH_ROUNDS (3), BENCH_MONGO_PORT (28641).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MongoClient, ObjectId } from 'mongodb';
import { installLauncher, startLauncher, stopLauncher } from './support/launcher-engine.ts';
import { processCpuMs } from './support/process-cpu.ts';
import { median } from './support/median.ts';

const count = Number(process.env.BENCH_IDS ?? 8000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const port = Number(process.env.BENCH_MONGO_PORT ?? 28641);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-id-lists-'));
const engine = await startLauncher(installLauncher(), { port, file: path.join(dir, 'mongo.mv.db'), heap: '1g' });
const client = await MongoClient.connect(`mongodb://127.0.0.1:${port}`);
try {
  const rows = client.db('idlists').collection<{ _id: ObjectId; n: number; acked: string[] }>('rows');
  const docs = Array.from({ length: count }, (_, n) => ({ _id: new ObjectId(), n, acked: [] as string[] }));
  await rows.insertMany(docs);
  const ids = docs.map((doc) => doc._id);
  /** Engine CPU ms per document of `work`. */
  const measure = async (work: () => Promise<unknown>) => {
    const from = processCpuMs(engine.pid);
    await work();
    return (processCpuMs(engine.pid) - from) / count;
  };
  const results: Record<string, number[]> = { list: [], find: [], baseline: [] };
  for (let round = 0; round < rounds; round++) {
    results.list.push(await measure(() => rows.updateMany({ _id: { $in: ids } }, { $addToSet: { acked: `list-${round}` } })));
    results.find.push(await measure(() => rows.find({ _id: { $in: ids }, n: { $gte: count / 2 } }).toArray()));
    results.baseline.push(
      await measure(() => rows.bulkWrite(ids.map((_id) => ({ updateOne: { filter: { _id }, update: { $addToSet: { acked: `one-${round}` } } } })))),
    );
  }
  console.log(`| ${count} ids, median of ${rounds} rounds | engine CPU µs per document | against the baseline |`);
  console.log('|---|---:|---:|');
  for (const [name, label] of [
    ['list', 'one `updateMany` by the list'],
    ['find', 'one `find` by the list (and `n`)'],
    ['baseline', 'baseline: one `updateOne` by `_id` per id, one `bulkWrite`'],
  ] as const)
    console.log(`| ${label} | ${(median(results[name]) * 1000).toFixed(0)} | ${(median(results[name]) / median(results.baseline)).toFixed(2)} |`);
} finally {
  await client.close();
  await stopLauncher(engine);
  fs.rmSync(dir, { recursive: true, force: true });
}
