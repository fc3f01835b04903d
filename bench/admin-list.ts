// The content list page of the administration UI at 100,000 entries (issue 28: "a list page
// answers in under 300 ms"): the session-twin calls `/admin/content` makes, timed against the
// default workspace holding BENCH_ENTRIES entries (half posts, half pages; a third drafts).
// Seeding as bench/big-workspace.ts: one entry created and published through the API, then copied
// straight into the database with the driver (same document shape, its revisions too). The copies
// have no search postings, so `search` is timed over the entries the API wrote (the index's cost is
// bench/search.ts's subject) and is reported, not judged.
//   npx tsx bench/admin-list.ts   (engines from MONGODB_URI / TEMPORAL_ADDRESS, else local ones)
// Env: BENCH_ENTRIES (100000), BENCH_REPEAT (30 timed calls per request, after 2 warm-up calls).
import os from 'node:os';
import { startBenchWorld } from './support/world.ts';
import { callJson } from './support/http-call.ts';
import { createContext } from '../services/core/context.ts';
import { systemPrincipal } from '../services/core/principal.ts';
import { createUser } from '../services/access/users.ts';
import { createSession, SESSION_COOKIE } from '../services/access/sessions.ts';
import { newId } from '../services/core/ids.ts';
import { contentCollections, type EntryDoc } from '../services/content/model.ts';
import { ENTRY_COUNTS_ID } from '../services/content/entry-counts.ts';
import { SITE_STATE_COLLECTION } from '../services/core/site-state.ts';

const count = Number(process.env.BENCH_ENTRIES ?? 100_000);
const repeat = Number(process.env.BENCH_REPEAT ?? 30);
const TARGET_MS = 300;
const loadAtStart = os.loadavg();

const world = await startBenchWorld();
const { services } = world;
const address = await world.app.listen({ port: 0, host: '127.0.0.1' });
const scope = (await services.sites.resolve('localhost'))!;
const ctx = createContext(services, scope, systemPrincipal('bench setup'), { id: 'bench', ip: '127.0.0.1' });
const editor = await createUser(ctx, { email: 'editor@bench.example.test', role: 'editor', policy: {}, password: 'bench editor password' });
const { token } = await createSession(ctx.db, scope.site._id, editor._id, services.clock.now());
const headers = { host: 'localhost', origin: 'http://localhost', cookie: `${SESSION_COOKIE}=${token}` };
const call = async (method: string, path: string, body?: unknown) => {
  const answer = await callJson(address, method, path, headers, body);
  if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
};

// ---- seeding ----
const seedStart = performance.now();
const template = await call('POST', '/api/content', {
  title: 'Bench template',
  excerpt: 'A short summary of the entry.',
  blocks: { version: 1, blocks: [{ type: 'paragraph', text: 'Lorem ipsum dolor sit amet. '.repeat(8) }] },
});
await call('POST', `/api/content/${String(template.id)}/publish`, {});
const { entries, revisions } = contentCollections(ctx.db);
const doc = (await entries.findOne({ _id: String(template.id) }))!;
const docRevisions = await revisions.find({ entryId: doc._id }).toArray();
const oldest = doc.createdAt.getTime() - count * 1000;
for (let from = 0; from < count; from += 1000) {
  const docs: EntryDoc[] = [];
  for (let i = from; i < Math.min(count, from + 1000); i++) {
    const at = new Date(oldest + i * 1000);
    const title = `Seeded entry ${i}`;
    const draft = i % 3 === 0;
    const slug = `seeded-${i}`;
    docs.push({
      ...doc,
      _id: newId(at.getTime()),
      type: i % 2 === 0 ? 'post' : 'page',
      status: draft ? 'draft' : 'published',
      slug,
      title,
      titleLower: title.toLowerCase(),
      live: draft || !doc.live ? null : { ...doc.live, slug, title, titleLower: title.toLowerCase() },
      createdAt: at,
      updatedAt: at,
      publishedAt: draft ? null : at,
    });
  }
  await entries.insertMany(docs, { ordered: false });
  await revisions.insertMany(
    docs.flatMap((d) => docRevisions.map((r) => ({ ...r, _id: `${d._id}:${r.version}`, entryId: d._id, slug: d.slug, title: d.title }))),
    { ordered: false },
  );
}
await ctx.db
  .collection<{ _id: string }>(SITE_STATE_COLLECTION)
  .updateOne({ _id: ENTRY_COUNTS_ID }, { $inc: { total: count, [`sites.${scope.site._id}`]: count } }, { upsert: true });
// A few entries written through the API, so the search finds something.
for (let i = 0; i < 20; i++) await call('POST', '/api/content', { title: `Searchable report ${i}`, type: i % 2 ? 'page' : 'post' });
console.log(`seeded ${count} entries in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);

// ---- the page's requests ----
const firstPage = (await call('GET', '/api/content?limit=25')) as { page: { nextCursor: string } };
const REQUESTS: Array<[string, string, boolean]> = [
  // [what, path, judged against the target]
  ['session (auth/me)', '/api/auth/me', true],
  ['content types', '/api/content-types?limit=200', true],
  ['languages', '/api/languages?limit=200', true],
  ['users (author filter)', '/api/users?limit=200', true],
  ['taxonomies', '/api/taxonomies?limit=200', true],
  ['terms of a taxonomy', '/api/taxonomies/category/terms?limit=200', true],
  ['list, first page', '/api/content?limit=25&order=newest', true],
  ['list, next page (cursor)', `/api/content?limit=25&order=newest&cursor=${encodeURIComponent(firstPage.page.nextCursor)}`, true],
  ['list, oldest first', '/api/content?limit=25&order=oldest', true],
  ['list, status=draft', '/api/content?limit=25&status=draft', true],
  ['list, type=page', '/api/content?limit=25&type=page', true],
  ['list, type=page&status=draft', '/api/content?limit=25&type=page&status=draft', true],
  ['list, locale=en', '/api/content?limit=25&locale=en', true],
  ['list, status=published&locale=en', '/api/content?limit=25&status=published&locale=en', true],
  ['list, author=editor', `/api/content?limit=25&author=${editor._id}`, true],
  ['list, search', '/api/content?limit=25&search=searchable%20report', false],
];
const ms = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!;
const rows: string[] = [];
let failed = 0;
for (const [what, path, judged] of REQUESTS) {
  for (let i = 0; i < 2; i++) await call('GET', path);
  const samples: number[] = [];
  for (let i = 0; i < repeat; i++) {
    const start = performance.now();
    await call('GET', path);
    samples.push(performance.now() - start);
  }
  const p95 = ms(samples, 0.95);
  const verdict = judged ? (p95 < TARGET_MS ? 'ok' : 'SLOW') : 'reported';
  if (verdict === 'SLOW') failed++;
  rows.push(`| ${what} | ${ms(samples, 0.5).toFixed(1)} | ${p95.toFixed(1)} | ${verdict} |`);
  process.stderr.write(`  ${rows.at(-1)}\n`);
}
// The page's first load: its choices in parallel, then the first page (content.js).
const loads: number[] = [];
for (let i = 0; i < repeat; i++) {
  const start = performance.now();
  await call('GET', '/api/auth/me');
  await Promise.all(REQUESTS.slice(1, 6).map(([, path]) => call('GET', path)));
  await call('GET', '/api/content?limit=25&order=newest');
  loads.push(performance.now() - start);
}
const loadP95 = ms(loads, 0.95);
if (loadP95 >= TARGET_MS) failed++;
rows.push(
  `| whole first load (me, then 5 choices in parallel, then the list) | ${ms(loads, 0.5).toFixed(1)} | ${loadP95.toFixed(1)} | ${loadP95 < TARGET_MS ? 'ok' : 'SLOW'} |`,
);

console.log(
  `\n${count} entries; ${repeat} calls each; load average at start ${loadAtStart.map((l) => l.toFixed(1)).join(' ')}, at end ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
console.log('| request | median ms | p95 ms | < 300 ms |\n| --- | --- | --- | --- |');
console.log(rows.join('\n'));
await world.close();
process.exit(failed ? 1 : 0);
