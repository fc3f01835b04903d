// The read path at the ceiling (issue 14): the load generator (autocannon) runs in its own process;
// a bare Fastify route sends the same bytes in the same run (and a second one the same bytes with the
// headers our answers carry: a request id, nosniff, the ETag); the driver's command monitoring counts
// database commands per request while each target runs. The generator and this process are pinned
// to cores of their own (bench/support/load.ts, BENCH_PIN=0 to not).
// Targets: cached public list and entry ≥ 0.9 of bare Fastify; keyed management GET ≥ 0.75 of the
// public one; the same read round-robin over BENCH_WORKSPACES workspaces ≥ 0.8 of one workspace;
// 0 database commands per cached read while the change feed is up.
//   npx tsx bench/readpath.ts   (engines from MONGODB_URI / TEMPORAL_ADDRESS, else local ones;
//   BENCH_OWN_ENGINES=1: engines of the run's own, see bench/support/world.ts)
// Env: BENCH_CONNECTIONS (50), BENCH_DURATION (5 s per round), BENCH_ROUNDS (3), BENCH_ENTRIES (60),
// BENCH_WORKSPACES (1000, provisioned through POST /tenants with a worker in its own process),
// BENCH_PROVISION_CONCURRENCY (16), BENCH_ONLY (a regexp: only the matching targets, for profiling).
import { seedPublishedEntries } from './support/seed-entries.ts';
import Fastify from 'fastify';
import type { CommandStartedEvent } from 'mongodb';
import { ownEnginesIfAsked, startBenchWorld } from './support/world.ts';
import { createApiKey } from './support/operator-key.ts';
import { provisionWorkspaces } from './support/provision.ts';
import { runLoad } from './support/load.ts';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { WORKER_NODE_FLAGS } from '../scripts/worker-node-flags.mjs';
import { createContext } from '../services/core/context.ts';
import { systemPrincipal } from '../services/core/principal.ts';
import { createKey } from '../services/access/keys.ts';
import { loadUserAccess } from '../services/access/user-access.ts';
import { findUserByEmail } from '../services/access/users.ts';
import { writeKeySettings, DEFAULT_KEY_SETTINGS } from '../services/access/site-settings-store.ts';
import { topics } from '../services/core/topics.ts';
import { GATEWAYS_COLLECTION, STATE_CHANGES_COLLECTION } from '../services/core/change-feed.ts';

const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const durationSec = Number(process.env.BENCH_DURATION ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const entries = Number(process.env.BENCH_ENTRIES ?? 60);
const workspaceCount = Number(process.env.BENCH_WORKSPACES ?? 1000);

const stopEngines = await ownEnginesIfAsked();
const world = await startBenchWorld({ monitorCommands: true, env: { LIFECYCLE_WAIT_MS: '30000' } });
const { services } = world;
// Command monitoring: every command this process sends, attributed to the target under load.
let requestCommands = 0;
let feedCommands = 0;
/** Which request-path commands ran during the current target (printed per target: what a cached read still costs). */
let commandTally = new Map<string, number>();
const feedCollections = new Set([STATE_CHANGES_COLLECTION, GATEWAYS_COLLECTION]);
services.mongo.on('commandStarted', (event: CommandStartedEvent) => {
  const target = event.command[event.commandName];
  const collection = event.commandName === 'getMore' ? event.command.collection : target;
  if (typeof collection === 'string' && feedCollections.has(collection)) feedCommands++;
  else {
    requestCommands++;
    const what = `${event.commandName} ${event.databaseName}.${String(collection)}`;
    commandTally.set(what, (commandTally.get(what) ?? 0) + 1);
  }
});
// Changes applied while a target runs (each one drops cached state, so the next read goes to the database).
let appliedTopics: string[] = [];
services.changeFeed.subscribe((topic) => appliedTopics.push(topic ?? '(all: trust lost or feed reopened)'));

const scope = (await services.sites.resolve('localhost'))!;
const ctx = createContext(services, scope, systemPrincipal('benchmark seed'), { id: 'bench', ip: '127.0.0.1' });
await seedPublishedEntries(ctx, entries);
// A Management API key (content:read) with a limit the benchmark cannot reach.
const owner = (await findUserByEmail(ctx, world.admin.email))!;
const access = (await loadUserAccess(ctx.db, ctx.site._id, owner._id))!;
const { key } = await createKey(ctx, { userId: owner._id, capabilities: access.capabilities }, {
  name: 'bench',
  capabilities: ['content:read'],
  scope: undefined,
  allowedIps: undefined,
  allowedOrigins: undefined,
  expiresAt: null,
  rateLimitPerMin: 10_000_000,
} as never);
await writeKeySettings(ctx.db, ctx.site._id, { ...DEFAULT_KEY_SETTINGS, enabled: true, defaultRateLimitPerMin: 10_000_000 }, services.clock.now());
await services.changeFeed.publish(topics.siteAccess(ctx.site._id));

// Tenants for the multi-workspace read, provisioned through the API (one site each) by the
// workspace actor, in a worker process of its own.
const address = await world.app.listen({ port: 0, host: '127.0.0.1' });
const worker = spawn(process.execPath, [...WORKER_NODE_FLAGS, '--import', 'tsx', 'bench/support/worker-process.ts'], {
  env: {
    ...process.env,
    DB_PREFIX: world.config.DB_PREFIX,
    TEMPORAL_TASK_QUEUE: world.config.TEMPORAL_TASK_QUEUE,
    SECRET_KEY: world.config.SECRET_KEY,
    LOG_LEVEL: 'warn',
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
await new Promise<void>((resolve, reject) => {
  worker.stdout!.on('data', (chunk: Buffer) => String(chunk).includes('worker ready') && resolve());
  worker.once('exit', (code) => reject(new Error(`worker exited ${code}`)));
});
const provisioned = await provisionWorkspaces(address, await createApiKey(world), workspaceCount, Number(process.env.BENCH_PROVISION_CONCURRENCY ?? 16));
const { hosts } = provisioned;
const seedSeconds = Math.round(provisioned.seconds);

const LIST = '/api/v1/content?limit=20';
const ONE = `/api/v1/content/bench-${Math.floor(entries / 2)}`;
const MANAGE = '/api/manage/v1/content?limit=20';
const answer = (url: string, headers: Record<string, string> = {}) => world.app.inject({ method: 'GET', url, headers });
const body = async (url: string, headers: Record<string, string> = {}) => (await answer(url, headers)).body;
const bodies = { list: await body(LIST), one: await body(ONE), tenant: await body(LIST, { host: hosts[0] }) };
const etags = { list: String((await answer(LIST)).headers.etag), one: String((await answer(ONE)).headers.etag) };
const manageBytes = (await body(MANAGE, { authorization: `Bearer ${key}` })).length;
const bare = Fastify();
for (const [name, text] of Object.entries(bodies)) bare.get(`/${name}`, (_req, reply) => reply.type('application/json; charset=utf-8').send(text));
// The same bytes with the headers our answers carry (a request id, nosniff, the ETag): what those
// headers alone cost, apart from the path that sends them.
for (const name of ['list', 'one'] as const) {
  bare.get(`/${name}-headers`, (_req, reply) =>
    reply
      .headers({ 'x-request-id': randomUUID(), 'x-content-type-options': 'nosniff', etag: etags[name] })
      .type('application/json; charset=utf-8')
      .send(bodies[name]),
  );
}
const bareAddress = await bare.listen({ port: 0, host: '127.0.0.1' });

interface Target {
  name: string;
  url: string;
  headers?: Record<string, string>;
  hosts?: string[];
}
interface Result {
  name: string;
  requestsPerSec: number;
  p50: number;
  p99: number;
  bad: number;
  commandsPerRequest: number;
  feedCommandsPerSec: number;
  /** CPU time of this (the gateway's) process per request: what the path costs, whatever the machine's load. */
  cpuMicrosPerRequest: number;
  /** Share of the requests the public cache-hit lane answered in front of Fastify. */
  laneShare: number;
}

/** Requests answered in front of Fastify: held public answers and held keyed reads. */
const lanesAnswered = () => world.app.publicLane.answered + world.app.manageLane.answered;

async function run(target: Target): Promise<Result> {
  const before = { request: requestCommands, feed: feedCommands, at: Date.now(), cpu: process.cpuUsage(), lane: lanesAnswered() };
  commandTally = new Map();
  appliedTopics = [];
  const r = await runLoad({ url: target.url, connections, durationSec, headers: target.headers, hosts: target.hosts });
  if (appliedTopics.length > 0)
    console.error(
      `  ${target.name}: changes applied meanwhile: ${appliedTopics.slice(0, 10).join(', ')}${appliedTopics.length > 10 ? ` (+${appliedTopics.length - 10})` : ''}`,
    );
  if (commandTally.size > 0) console.error(`  ${target.name}: ${[...commandTally].map(([what, n]) => `${what} ×${n}`).join(', ')}`);
  const seconds = (Date.now() - before.at) / 1000;
  return {
    name: target.name,
    requestsPerSec: r.requestsPerSec,
    p50: r.p50,
    p99: r.p99,
    bad: r.non2xx + r.errors,
    commandsPerRequest: (requestCommands - before.request) / Math.max(1, r.requests),
    feedCommandsPerSec: (feedCommands - before.feed) / seconds,
    cpuMicrosPerRequest: (({ user, system }) => (user + system) / Math.max(1, r.requests))(process.cpuUsage(before.cpu)),
    laneShare: (lanesAnswered() - before.lane) / Math.max(1, r.requests),
  };
}

const allTargets: Target[] = [
  { name: 'bare Fastify, list bytes', url: `${bareAddress}/list` },
  { name: 'public list limit 20 (cached)', url: `${address}${LIST}` },
  { name: 'bare Fastify, list bytes and our headers', url: `${bareAddress}/list-headers` },
  { name: 'bare Fastify, entry bytes', url: `${bareAddress}/one` },
  { name: 'bare Fastify, entry bytes and our headers', url: `${bareAddress}/one-headers` },
  { name: 'public entry by slug (cached)', url: `${address}${ONE}` },
  { name: 'manage list limit 20 (key)', url: `${address}${MANAGE}`, headers: { authorization: `Bearer ${key}` } },
  { name: 'bare Fastify, empty-tenant list bytes', url: `${bareAddress}/tenant` },
  { name: 'tenant list, one workspace', url: `${address}${LIST}`, hosts: [hosts[0]] },
  { name: `tenant list, round-robin over ${workspaceCount} workspaces`, url: `${address}${LIST}`, hosts },
];
// BENCH_ONLY=<regexp>: run only the matching targets (profiling one path); the ratios need them all.
const only = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : null;
const targets = only ? allTargets.filter((t) => only.test(t.name)) : allTargets;

try {
  // Warm every path once with the Host the load will send (fills the response caches and the
  // per-gateway state: `127.0.0.1` and `localhost` are two hosts to the resolver).
  for (const target of targets) {
    for (const host of target.hosts ?? [new URL(target.url).host]) await body(target.url.replace(/^http:\/\/[^/]+/, ''), { ...target.headers, host });
  }
  const runs = new Map<string, Result[]>(targets.map((t) => [t.name, []]));
  for (let round = 0; round < rounds; round++) for (const target of targets) runs.get(target.name)!.push(await run(target));
  const median = (name: string) => {
    const sorted = [...runs.get(name)!].sort((a, b) => a.requestsPerSec - b.requestsPerSec);
    return sorted[Math.floor(sorted.length / 2)];
  };
  const results = targets.map((t) => median(t.name));
  if (only) {
    for (const r of results)
      console.log(
        `| ${r.name} | ${r.requestsPerSec} | ${r.p50} | ${r.p99} | ${r.cpuMicrosPerRequest.toFixed(0)} | ${r.commandsPerRequest.toFixed(4)} | ${r.feedCommandsPerSec.toFixed(1)} | ${(100 * r.laneShare).toFixed(0)}% | ${r.bad} |`,
      );
    process.exitCode = 0;
  } else {
    const by = (prefix: string) => results.find((r) => r.name.startsWith(prefix))!;
    const ratio = (a: Result, b: Result) => (a.requestsPerSec / b.requestsPerSec).toFixed(2);
    const [bareList, bareListHeaders, publicList] = [by('bare Fastify, list bytes'), by('bare Fastify, list bytes and'), by('public list')];
    const [bareOne, bareOneHeaders, publicOne] = [by('bare Fastify, entry bytes'), by('bare Fastify, entry bytes and'), by('public entry')];
    const [manage, tenantOne, tenantAll] = [by('manage list'), by('tenant list, one'), by('tenant list, round-robin')];
    console.log(
      `\nRead path (${connections} connections, ${durationSec}s per round, median of ${rounds} alternating rounds; load generator in its own process)`,
    );
    console.log(
      `list ${bodies.list.length} B, entry ${bodies.one.length} B, manage list ${manageBytes} B, tenant list ${bodies.tenant.length} B; ${workspaceCount} workspaces provisioned through the API in ${seedSeconds}s (${provisioned.perMinute.toFixed(0)}/min, ${provisioned.notActive} not active within the wait)\n`,
    );
    console.log(
      '| target | req/s | p50 ms | p99 ms | gateway CPU µs / request | db commands / request | feed commands / s | answered by the lane | non-2xx+errors |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const r of results)
      console.log(
        `| ${r.name} | ${r.requestsPerSec} | ${r.p50} | ${r.p99} | ${r.cpuMicrosPerRequest.toFixed(0)} | ${r.commandsPerRequest.toFixed(4)} | ${r.feedCommandsPerSec.toFixed(1)} | ${(100 * r.laneShare).toFixed(0)}% | ${r.bad} |`,
      );
    console.log('');
    console.log(`cached public list / bare:            ${ratio(publicList, bareList)} (target ≥ 0.90)`);
    console.log(`cached public entry / bare:           ${ratio(publicOne, bareOne)} (target ≥ 0.90)`);
    console.log(
      `  the same against bare Fastify sending our headers too: list ${ratio(publicList, bareListHeaders)}, entry ${ratio(publicOne, bareOneHeaders)}`,
    );
    console.log(`keyed manage list / public list:      ${ratio(manage, publicList)} (target ≥ 0.75)`);
    console.log(`round-robin ${workspaceCount} / one workspace:  ${ratio(tenantAll, tenantOne)} (target ≥ 0.80)`);
    console.log(
      `db commands per cached public read:   ${publicList.commandsPerRequest.toFixed(4)} list, ${publicOne.commandsPerRequest.toFixed(4)} entry, ${tenantAll.commandsPerRequest.toFixed(4)} round-robin (target 0)`,
    );
  }
} finally {
  await bare.close();
  worker.kill('SIGTERM');
  await new Promise((resolve) => worker.once('exit', resolve));
  await world.close();
  await stopEngines();
}
