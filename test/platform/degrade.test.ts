import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request as httpRequest } from 'node:http';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureEngines, stopEngines } from '../../scripts/engines.mjs';
import { startWorld, type World } from '../support/world.ts';
import { createApiKey } from '../support/access.ts';
import { eventually } from '../support/polling.ts';
import { AppError } from '../../services/core/errors.ts';

// Engines of this test's own (never the shared ones): it kills them with SIGKILL and starts them
// again. A new folder each run: nothing a run before left (workspaces, logs) weighs on this one.
const dataDir = mkdtempSync(join(tmpdir(), 'degrade-engines-'));
// Ports of its own: test/engines.indexes.test.ts uses 27517, the placement tests 27617/7633.
const engineOptions = { dataDir, mongoPort: 27537, temporalPort: 7553, log: () => undefined };
/** Shorter than the 5 s default so the test is quick; the bound is the setting, whatever its value. */
const WAIT_MS = 2000;
/** What a request may take past the bound on a loaded two-core machine (event loop, the JVM engine). */
const MARGIN_MS = 1500;

const kill9 = (engine: 'mongo' | 'temporal') => process.kill(Number(readFileSync(`${dataDir}/${engine}.pid`, 'utf8').trim()), 'SIGKILL');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An error as the error handler met it: class, code, message, what it wraps, where it was thrown. */
function anatomy(error: unknown, depth = 0): string {
  if (!(error instanceof Error)) return JSON.stringify(error);
  const fields = error as Error & { code?: unknown; errorResponse?: unknown; errors?: unknown[] };
  const inner = [fields.cause, fields.errorResponse, ...(Array.isArray(fields.errors) ? fields.errors : [])].filter((e) => e instanceof Error);
  const where = (error.stack ?? '')
    .split('\n')
    .slice(1, 4)
    .map((line) => line.trim())
    .join(' < ');
  const wrapped = depth < 3 ? inner.map((e) => ` [wraps ${anatomy(e, depth + 1)}]`).join('') : '';
  return `${error.constructor.name}${fields.code === undefined ? '' : `(${String(fields.code)})`}: ${error.message} @ ${where}${wrapped}`;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

describe('degrade, never hang: an engine killed under load and brought back', () => {
  let world: World;
  let port: number;
  let key: string;
  let engines: { mongoUri: string; temporalAddress: string };
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });

  const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const sent = httpRequest(
        {
          host: '127.0.0.1',
          port,
          path,
          method,
          agent,
          headers: { host: 'localhost', ...(payload ? { 'content-type': 'application/json' } : {}), ...headers },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks).toString() }));
        },
      );
      sent.on('error', reject);
      sent.end(payload);
    });
  const manage = (method: string, path: string, body?: unknown) => send(method, `/api/manage/v1${path}`, body, { authorization: `Bearer ${key}` });

  beforeAll(async () => {
    engines = await ensureEngines(engineOptions);
    // Errors logged: an answer that is not a 503 shows its cause in the run's output.
    world = await startWorld({
      env: { MONGODB_URI: engines.mongoUri, TEMPORAL_ADDRESS: engines.temporalAddress, ENGINE_WAIT_MS: String(WAIT_MS), LOG_LEVEL: 'error' },
    });
    await world.app.listen({ port: 0, host: '127.0.0.1' });
    port = (world.app.server.address() as { port: number }).port;
    ({ key } = await createApiKey(world, { capabilities: ['content:read', 'content:create', 'content:update', 'content:publish'] }));
  }, 180_000);

  afterAll(async () => {
    agent.destroy();
    try {
      await ensureEngines(engineOptions).catch(() => undefined);
      await world?.close();
    } finally {
      await stopEngines({ dataDir, log: () => undefined });
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('MongoDB: requests answer 503 with Retry-After within ENGINE_WAIT_MS, cached public reads are served, health and metrics name it, all resumes without a restart, no acknowledged write is lost', async () => {
    for (let i = 0; i < 3; i++) expect((await manage('POST', '/content', { title: `Before ${i}`, status: 'published' })).status).toBe(201);
    // The public list, read until its answer comes from the cache-hit lane (the setup's writes
    // reach this gateway's feed a poll later, each dropping the held answer once).
    await eventually(
      async () => {
        const before = world.app.publicLane.answered;
        expect((await send('GET', '/api/v1/content')).status).toBe(200);
        return world.app.publicLane.answered === before + 1;
      },
      'the public list served from the cache-hit lane',
      20_000,
      100,
    );

    type Sample = { kind: 'write' | 'public' | 'manage'; start: number; ms: number; answer: Answer };
    const records: Sample[] = [];
    const acknowledged: { id: string; at: number }[] = [];
    let running = true;
    let n = 0;
    const timed = async (kind: Sample['kind'], run: () => Promise<Answer>) => {
      const start = Date.now();
      // A request the gateway did not answer at all is recorded as status 0 (and fails the checks below).
      const answer = await run().catch((error: Error): Answer => ({ status: 0, headers: {}, body: error.message }));
      records.push({ kind, start, ms: Date.now() - start, answer });
      return answer;
    };
    const loop = async (step: () => Promise<unknown>) => {
      while (running) {
        await step();
        await sleep(20);
      }
    };
    const clients = [
      ...Array.from({ length: 2 }, () =>
        loop(async () => {
          // Drafts: they do not move the public generation, so the public list stays cached.
          const written = await timed('write', () => manage('POST', '/content', { title: `Load ${n++}` }));
          if (written.status === 201) acknowledged.push({ id: JSON.parse(written.body).id, at: Date.now() });
        }),
      ),
      loop(() => timed('public', () => send('GET', '/api/v1/content'))),
      loop(() => timed('manage', () => manage('GET', '/content?limit=1'))),
    ];

    // The driver's view of the server (its monitor's checks), told when the client does not come back.
    const monitor: string[] = [];
    let killedAt = Infinity;
    const note = (what: string) => (event: { failure?: Error; duration?: number; newDescription?: { type: string } }) =>
      Date.now() >= killedAt &&
      monitor.push(
        `${Date.now() - killedAt} ${what}${event.failure ? ` ${event.failure.message}` : ''}${event.newDescription ? ` ${event.newDescription.type}` : ''}`,
      );
    for (const name of [
      'serverHeartbeatStarted',
      'serverHeartbeatSucceeded',
      'serverHeartbeatFailed',
      'serverDescriptionChanged',
      'connectionPoolCleared',
      'connectionPoolReady',
    ]) {
      world.services.mongo.on(name, note(name));
    }
    // What the error handler met and could not name (a 500's cause), told with any answer not a 503:
    // recorded here because the test's gateway logs nothing.
    const unnamed: string[] = [];
    const { engines: watch } = world.services;
    const classify = watch.classify.bind(watch);
    watch.classify = (error) => {
      const named = classify(error);
      if (named === error && !(error instanceof AppError && error.status < 500)) unnamed.push(`${Date.now() - killedAt} ms: ${anatomy(error)}`);
      return named;
    };
    await sleep(4000);
    killedAt = Date.now();
    kill9('mongo');
    // Past the change feed's lease (5 s): cached public reads must outlive it.
    await eventually(() => world.services.engines.missing().includes('database'), 'the database seen missing', 10_000);
    await sleep(7000);
    const health = JSON.parse((await send('GET', '/healthz')).body);
    expect(health).toMatchObject({ status: 'degraded', engines: { database: 'down', temporal: 'up' }, missing: ['database'] });
    expect(await world.services.metrics.registry.metrics()).toMatch(/cwb_engine_up\{engine="database",cluster="default"\} 0/);

    const restartedAt = Date.now();
    await ensureEngines(engineOptions);
    const backAt = Date.now();
    const resumed = await eventually(
      () => records.find((r) => r.kind === 'write' && r.start >= backAt && r.answer.status === 201),
      'a write acknowledged after the engine came back',
      20_000,
    )
      .catch(async (error: Error) => {
        const since = records.filter((r) => r.start >= backAt);
        const tally = new Map<string, number>();
        for (const r of since) tally.set(`${r.kind} ${r.answer.status}`, (tally.get(`${r.kind} ${r.answer.status}`) ?? 0) + 1);
        const lastWrite = since.filter((r) => r.kind === 'write').at(-1);
        const told = `${JSON.stringify([...tally])}, last write: ${lastWrite ? `${lastWrite.answer.status} ${lastWrite.answer.body.slice(0, 200)}` : 'none'}`;
        // Whether the engine answers a client of its own: tells a wedged driver from a wedged engine.
        const fresh = new MongoClient(engines.mongoUri, { serverSelectionTimeoutMS: 3000 });
        const own = await fresh
          .db('admin')
          .command({ ping: 1 })
          .then(
            () => 'answers',
            (e: Error) => e.message,
          )
          .finally(() => fresh.close());
        const engineLog = readFileSync(`${dataDir}/mongo.log`, 'utf8').split('\n').slice(-15).join('\n');
        const topology = JSON.stringify([
          ...(world.services.mongo as unknown as { topology: { description: { servers: Map<string, unknown> } } }).topology.description.servers.values(),
        ]);
        throw new Error(
          `${error.message}; a new client's ping: ${own}; topology ${topology}; monitor (ms since the kill): ${monitor.slice(-40).join(' | ')}; engines ${JSON.stringify(world.services.engines.report())}; answers since: ${told}; engine log:\n${engineLog}`,
        );
      })
      .finally(() => {
        running = false;
      });
    await Promise.all(clients);

    // Within seconds of the engine's return, without a restart of the gateway.
    expect(resumed.start + resumed.ms - backAt).toBeLessThan(5000);
    // Health too (a check of the engine's first, cold seconds may still find it slow: the next one a second later).
    await eventually(
      async () => JSON.parse((await send('GET', '/healthz')).body).status === 'ok' && world.services.engines.missing().length === 0,
      `health back to ok; monitor (ms since the kill): ${monitor.slice(-30).join(' | ')}`,
      5000,
    );

    // No request waited past the bound. One served after the return is the engine's own time, not
    // a wait for it (a JVM's first seconds on a loaded machine are slow): it waited at most
    // ENGINE_WAIT_MS for the engine to come back, or it would be a 503.
    const bounded = records.filter((r) => r.answer.status >= 400 || r.answer.status === 0 || r.start + r.ms < restartedAt);
    const slowest = Math.max(...bounded.map((r) => r.ms));
    const slow = bounded.filter((r) => r.ms > WAIT_MS + MARGIN_MS).map((r) => `${r.kind} ${r.answer.status} at ${r.start - killedAt} ms took ${r.ms} ms`);
    expect(slowest, `${slow.join('; ')} (engine restarted at ${restartedAt - killedAt} ms, back at ${backAt - killedAt} ms)`).toBeLessThanOrEqual(
      WAIT_MS + MARGIN_MS,
    );
    // What the outage refused is a 503 { error } with Retry-After, nothing else.
    const refused = records.filter((r) => r.answer.status >= 400);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(
        r.answer.status,
        `${r.kind} at ${r.start - killedAt} ms (restarted at ${restartedAt - killedAt}, back at ${backAt - killedAt}): ${r.answer.body}; errors the handler could not name: ${unnamed.join(' | ') || 'none'}`,
      ).toBe(503);
      expect(r.answer.headers['retry-after']).toBe(String(WAIT_MS / 1000));
      expect(JSON.parse(r.answer.body)).toEqual({ error: expect.any(String) });
    }
    // Cached public reads were served all along the outage.
    // Answered before the restart began: a write still waiting (up to ENGINE_WAIT_MS) when the engine came back may land.
    const during = records.filter((r) => r.start > killedAt + 500 && r.start + r.ms < restartedAt);
    const publicDuring = during.filter((r) => r.kind === 'public');
    expect(publicDuring.length).toBeGreaterThan(10);
    expect(publicDuring.map((r) => `${r.start - killedAt}:${r.answer.status}`).filter((t) => !t.endsWith(':200'))).toEqual([]);
    expect(
      during
        .filter((r) => r.kind === 'write')
        .map((r) => `${r.start - killedAt}:${r.answer.status}`)
        .filter((t) => !t.endsWith(':503')),
    ).toEqual([]);

    // Every write acknowledged before the kill is there (the local engine commits to disk every
    // 200 ms: engines/README.md; what it acknowledged in its last second is counted apart).
    const db = world.services.workspaceDb({ dbName: world.defaultWorkspace.dbName });
    const stored = new Set(
      (
        await db
          .collection('content_entries')
          .find({}, { projection: { _id: 1 } })
          .toArray()
      ).map((row) => String(row._id)),
    );
    const settled = acknowledged.filter((w) => w.at < killedAt - 1000);
    expect(settled.length).toBeGreaterThan(3);
    expect(settled.filter((w) => !stored.has(w.id))).toEqual([]);
    const afterBack = acknowledged.filter((w) => w.at > backAt);
    expect(afterBack.filter((w) => !stored.has(w.id))).toEqual([]);
    // Their audit rows too: a row queued when the engine went is written once it is back (the rows
    // of writes acknowledged during the outage, the test's first write after the return).
    await world.services.audit.settled();
    const audited = new Set(
      (
        await db
          .collection('audit_log')
          .find({ action: 'content.create' }, { projection: { 'target.id': 1 } })
          .toArray()
      ).map((row) => String(row.target.id)),
    );
    // (The engine's last second before the kill is again counted apart: a row it acknowledged then may be lost with it.)
    expect([...settled, ...afterBack].filter((w) => !audited.has(w.id))).toEqual([]);
  }, 120_000);

  it('Temporal: a route that starts a job answers 503 fast while it is down, and works again once it is back', async () => {
    const created = await manage('POST', '/content', { title: 'To schedule' });
    expect(created.status).toBe(201);
    const { id } = JSON.parse(created.body);
    const publishOn = new Date(Date.now() + 3_600_000).toISOString();

    kill9('temporal');
    const first = Date.now();
    const refused = await manage('PUT', `/content/${id}/schedule`, { publishOn, unpublishOn: null });
    expect(Date.now() - first).toBeLessThanOrEqual(WAIT_MS + MARGIN_MS);
    expect(refused.status, refused.body).toBe(503);
    expect(refused.headers['retry-after']).toBe(String(WAIT_MS / 1000));
    expect(JSON.parse(refused.body)).toEqual({ error: expect.any(String) });
    // Nothing changed: the entry is still a draft without a schedule.
    const entry = JSON.parse((await manage('GET', `/content/${id}`)).body);
    expect(entry.status).toBe('draft');
    expect(entry.schedule ?? null).toBeNull();
    // Once known missing, the next one does not wait at all.
    const second = Date.now();
    expect((await manage('PUT', `/content/${id}/schedule`, { publishOn, unpublishOn: null })).status).toBe(503);
    expect(Date.now() - second).toBeLessThan(1000);
    expect(JSON.parse((await send('GET', '/healthz')).body)).toMatchObject({ status: 'degraded', missing: ['temporal'] });
    expect(await world.services.metrics.registry.metrics()).toMatch(/cwb_engine_up\{engine="temporal"\} 0/);
    // Reads and writes that need no job go on.
    expect((await manage('POST', '/content', { title: 'While Temporal is down' })).status).toBe(201);

    const restarted = Date.now();
    await ensureEngines(engineOptions);
    const back = Date.now();
    const scheduled = await eventually(
      async () => {
        const answer = await manage('PUT', `/content/${id}/schedule`, { publishOn, unpublishOn: null });
        return answer.status === 200 && answer;
      },
      'the schedule once Temporal is back',
      20_000,
      250,
    );
    expect(Date.now() - back, `Temporal restarted in ${back - restarted} ms`).toBeLessThan(5000);
    expect(JSON.parse(scheduled.body).status).toBe('scheduled');
    expect(world.services.engines.missing()).toEqual([]);
  }, 120_000);
});
