// Content write latency through the one write path (issue 22) against a baseline of the same writes
// done by hand with direct driver calls and the same effects (what the routes did before the write
// path: read, one optimistic write, the revision, a generation bump, the event), in the same process
// and the same run, alternating A/B rounds so drift hits both sides alike. Writes are sequential
// (latency, not throughput), so no separate load process: the client would only add its own hop.
// Operations: create, update (working revision), publish, and a term deletion touching 1,000
// entries (the inline batches, the same functions the term-removal job's activities run).
// Target: write path / baseline ≤ 1.05 per single write (mean).
//   npx tsx bench/content-writes.ts     (engines from MONGODB_URI / TEMPORAL_ADDRESS, else local ones)
// Env: BENCH_WRITES (200 per side per round), BENCH_ROUNDS (3), BENCH_TERM_ENTRIES (1000).
import type { Db } from 'mongodb';
import { startBenchWorld } from './support/world.ts';
import { createContext, type OperationContext } from '../services/core/context.ts';
import { systemPrincipal } from '../services/core/principal.ts';
import { createSiteResolver } from '../services/tenancy/site-resolver.ts';
import { newId } from '../services/core/ids.ts';
import { contentCollections, newEntryState, type EntryDoc } from '../services/content/model.ts';
import { recordRevision } from '../services/content/entries.ts';
import { syncEntriesSearch } from '../services/content/search-index.ts';
import { statusChange } from '../services/content/lifecycle.ts';
import { changeEntryOrFail, createEntry, eventData } from '../services/content/write-path.ts';
import { finishTermRemoval, removeTermBatch, BATCH } from '../services/content/term-removal.ts';
import { checkEntriesInScope } from '../services/content/write-path.ts';
import { taxonomyCollections } from '../services/content/taxonomies.ts';
import { withChangeNotes } from '../services/audit/record.ts';

const writes = Number(process.env.BENCH_WRITES ?? 200);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const termEntries = Number(process.env.BENCH_TERM_ENTRIES ?? 1000);

const world = await startBenchWorld();
const scope = (await createSiteResolver(world.services).resolve('localhost'))!;
const ctx = createContext(world.services, scope, systemPrincipal('benchmark'), { id: 'bench', ip: '127.0.0.1' });
// The baseline writes through the bare database handle: no derived generation, it bumps by hand.
const raw: Db = world.services.workspaceDb(scope.workspace);
const rawCtx: OperationContext = { ...ctx, db: raw };
const siteId = scope.site._id;
let serial = 0;

function entryDoc(terms: Record<string, string[]> = {}): EntryDoc {
  const now = new Date();
  const n = serial++;
  return {
    _id: newId(now.getTime()),
    siteId,
    type: 'post',
    title: `Write ${n}`,
    titleLower: `write ${n}`,
    slug: `write-${n}`,
    locale: 'en',
    status: 'draft',
    excerpt: 'A short summary.',
    blocks: { version: 1, blocks: [{ type: 'paragraph', text: 'Lorem ipsum dolor sit amet. '.repeat(8) }] },
    fields: {},
    live: null,
    publishedAt: null,
    authorId: null,
    terms,
    ...newEntryState(now),
  };
}

// ---- the baseline: the same effects by hand (the code before the write path) ----
// The search postings (issue 24) are one of the effects since: both sides keep them.
const handIndex = (doc: EntryDoc) => syncEntriesSearch(raw, siteId, [{ entryId: doc._id, doc }]);
async function handCreate(): Promise<string> {
  const doc = entryDoc();
  await contentCollections(raw).entries.insertOne(doc);
  await handIndex(doc);
  await ctx.emit('content.created', eventData(doc));
  return doc._id;
}
async function handChange(id: string, compute: (d: EntryDoc) => Partial<EntryDoc>, events: string[]): Promise<void> {
  const { entries } = contentCollections(raw);
  const before = (await entries.findOne({ _id: id, siteId, trashedAt: null }))!;
  const after = (await entries.findOneAndUpdate(
    { _id: id, siteId, trashedAt: null, version: before.version },
    { $set: { ...compute(before), updatedAt: new Date() }, $inc: { version: 1 } },
    { returnDocument: 'after' },
  ))!;
  // The state left becomes a revision (a create writes none: an entry's current state is its own).
  await recordRevision(rawCtx, before);
  await handIndex(after);
  await world.services.publicGeneration.bump(raw, siteId);
  for (const event of events) await ctx.emit(event, eventData(after));
}
const handUpdate = (id: string) => handChange(id, () => ({ title: `Edited ${serial++}`, titleLower: 'edited' }), ['content.updated']);
const handPublish = (id: string) => handChange(id, (d) => statusChange(d, 'published', new Date()), ['content.published']);

// ---- the write path ----
// Each write in the context an operation runs in (services/http/run-operation.ts): the write path's
// audit note joins the operation's one row, which the runner writes for a route either way (the
// old routes too), so neither side writes it here. A workflow's write has no runner: its own row.
const opCtx = () => withChangeNotes(ctx);
const pathCreate = async () => (await createEntry(opCtx(), entryDoc()))._id;
const pathUpdate = (id: string) =>
  changeEntryOrFail(
    opCtx(),
    id,
    undefined,
    () => ({ title: `Edited ${serial++}`, titleLower: 'edited' }),
    () => ({ events: ['content.updated'] }),
  );
const pathPublish = (id: string) =>
  changeEntryOrFail(
    opCtx(),
    id,
    undefined,
    (d) => statusChange(d, 'published', new Date()),
    () => ({ events: ['content.published'] }),
  );

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

interface Stats {
  mean: number;
  p50: number;
  p99: number;
}
const stats = (samples: number[]): Stats => {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { mean: samples.reduce((a, b) => a + b, 0) / samples.length, p50: at(0.5), p99: at(0.99) };
};

const samples: Record<string, { hand: number[]; path: number[] }> = {
  create: { hand: [], path: [] },
  update: { hand: [], path: [] },
  publish: { hand: [], path: [] },
};

// Warm-up (connections, JIT) on both sides.
for (let i = 0; i < 20; i++) {
  await handUpdate(await handCreate());
  await pathUpdate(await pathCreate());
}

for (let round = 0; round < rounds; round++) {
  for (const side of round % 2 === 0 ? (['hand', 'path'] as const) : (['path', 'hand'] as const)) {
    const create = side === 'hand' ? handCreate : pathCreate;
    const update = side === 'hand' ? handUpdate : pathUpdate;
    const publish = side === 'hand' ? handPublish : pathPublish;
    const ids: string[] = [];
    for (let i = 0; i < writes; i++) {
      let id = '';
      samples.create![side].push(await timed(async () => (id = await create())));
      ids.push(id);
    }
    for (const id of ids) samples.update![side].push(await timed(() => update(id)));
    for (const id of ids) samples.publish![side].push(await timed(() => publish(id)));
  }
}

// ---- a term deletion touching `termEntries` entries ----
async function seedTagged(): Promise<string> {
  const tag = { _id: newId(), siteId, taxonomy: 'tag', name: `bench ${serial}`, slug: `bench-${serial++}`, parentId: null, createdAt: new Date() };
  await taxonomyCollections(rawCtx).terms.insertOne(tag);
  await contentCollections(raw).entries.insertMany(Array.from({ length: termEntries }, () => entryDoc({ tag: [tag._id] })));
  return tag._id;
}
async function handTermDelete(tagId: string): Promise<void> {
  const { entries } = contentCollections(raw);
  const rows = await entries.find({ siteId, 'terms.tag': tagId, trashedAt: null }, { projection: { _id: 1 } }).toArray();
  for (let i = 0; i < rows.length; i += 25) {
    await Promise.all(
      rows.slice(i, i + 25).map(async (row) => {
        const before = (await entries.findOne({ _id: row._id, siteId }))!;
        await recordRevision(rawCtx, before);
        const after = (await entries.findOneAndUpdate(
          { _id: row._id, siteId, version: before.version },
          {
            $set: { terms: { tag: before.terms.tag!.filter((t) => t !== tagId) }, updatedAt: new Date(), changedBy: null, changeNote: 'term deleted' },
            $inc: { version: 1 },
          },
          { returnDocument: 'after' },
        ))!;
        await handIndex(after);
        await world.services.publicGeneration.bump(raw, siteId);
        await ctx.emit('content.updated', eventData(after));
      }),
    );
  }
  await taxonomyCollections(rawCtx).terms.deleteOne({ _id: tagId, siteId });
}
async function pathTermDelete(tagId: string): Promise<void> {
  const target = { taxonomy: 'tag', termId: tagId, label: `tag/${tagId}` };
  await checkEntriesInScope(ctx, { 'terms.tag': tagId });
  for (;;) if ((await removeTermBatch(ctx, target, BATCH)).found < BATCH) break;
  await finishTermRemoval(ctx, target);
}
async function oldTermDelete(tagId: string): Promise<void> {
  // What the route did before issue 22: one updateMany, no version, revision or event.
  await contentCollections(raw).entries.updateMany({ siteId, 'terms.tag': tagId }, { $pull: { 'terms.tag': tagId } });
  await taxonomyCollections(rawCtx).terms.deleteOne({ _id: tagId, siteId });
  await world.services.publicGeneration.bump(raw, siteId);
}
const termTimes: Record<string, number[]> = { hand: [], path: [], old: [] };
// The sides alternate which goes first (as the single writes do): the one after another's 1,000
// writes pays for what those leave the engine and the change feed to catch up on.
for (let round = 0; round < 2; round++) {
  const order = [
    ['hand', handTermDelete],
    ['path', pathTermDelete],
    ['old', oldTermDelete],
  ] as const;
  for (const [side, fn] of round % 2 === 0 ? order : ([order[1], order[0], order[2]] as const)) {
    const tagId = await seedTagged();
    termTimes[side]!.push(await timed(() => fn(tagId)));
  }
}

const fmt = (n: number) => n.toFixed(2).padStart(8);
console.log(`\nContent writes: ${writes} per side per round, ${rounds} rounds (A/B alternating), sequential, in process; ms per write`);
console.log('operation  | side                  |     mean |      p50 |      p99 | ratio (mean)');
for (const [name, { hand, path }] of Object.entries(samples)) {
  const h = stats(hand);
  const p = stats(path);
  console.log(`${name.padEnd(10)} | baseline (by hand)    | ${fmt(h.mean)} | ${fmt(h.p50)} | ${fmt(h.p99)} |`);
  console.log(`${name.padEnd(10)} | write path            | ${fmt(p.mean)} | ${fmt(p.p50)} | ${fmt(p.p99)} | ${(p.mean / h.mean).toFixed(3)} (target ≤ 1.05)`);
}
const best = (xs: number[]) => Math.min(...xs);
console.log(
  `\nTerm deletion touching ${termEntries} entries (best of 2, ms): baseline by hand ${best(termTimes.hand!).toFixed(0)}, ` +
    `write path ${best(termTimes.path!).toFixed(0)} (ratio ${(best(termTimes.path!) / best(termTimes.hand!)).toFixed(3)}), ` +
    `before issue 22 (one updateMany, no version/revision/event) ${best(termTimes.old!).toFixed(0)}`,
);
await world.close();
process.exit(0);
