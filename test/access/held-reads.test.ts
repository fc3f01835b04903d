import type { CommandStartedEvent } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenRecordingCommands, socketGet, type SocketAnswer } from '../support/listening-gateway.ts';
import { signIn, startContentWorld, type ContentWorld } from '../content/support.ts';
import { createApiKey, setManagementApi } from '../support/access.ts';
import { createRuntime } from '../../services/runtime.ts';
import { closeServices } from '../../services/core/services.ts';
import { freshWindow } from './world-helpers.ts';
import { eventually } from '../support/polling.ts';

// Held management reads (docs/access.md, "Held management reads"): a repeated keyed GET of a
// `heldAnswer` operation is sent again by the management lane in front of Fastify — same bytes and
// headers as the full path, counted against the key's limits in the same round trip that reads the
// site's access state — and stays exact: the next read after a write, a revocation or a switch
// shows it. The lane sits in the HTTP server, so these reads go over a socket.
let cw: ContentWorld;
let port = 0;
let commandsDuring: (run: () => Promise<unknown>) => Promise<string[]>;

const get = (url: string, key: string, headers: Record<string, string> = {}) =>
  socketGet(port, `/api/manage/v1${url}`, { authorization: `Bearer ${key}`, ...headers });

const answered = () => cw.world.app.manageLane.answered;
/** The statements that count a keyed request: the key on the site's settings document, the address on its own counter. */
const COUNTING = ['findAndModify site_state', 'findAndModify rate_counters'];
const countingOnly = (used: string[]) => used.filter((command) => !COUNTING.includes(command));
/** Header names in the order sent and their values, but those that differ on every answer (the remaining count too). */
const stableHeaders = (answer: SocketAnswer) =>
  Object.entries(answer.headers)
    .filter(([name]) => !['date', 'x-request-id'].includes(name))
    .map(([name, value]) => [name, name === 'ratelimit' ? String(value).replace(/;r=\d+/g, ';r=*') : value]);

beforeAll(async () => {
  cw = await startContentWorld({ monitorCommands: true });
  ({ port, commandsDuring } = await listenRecordingCommands(cw.world));
  for (let i = 0; i < 3; i++) await cw.create({ title: `Held ${i}`, slug: `held-${i}` });
  // Their search postings land a moment later, and their collection is one a held search reads: before the tests, not during one.
  await cw.world.services.searchSync.settled();
});
afterAll(async () => cw?.close());

describe('held management reads', () => {
  it("answers a repeated keyed read with the full path's bytes and headers and no content query; 304 on If-None-Match", async () => {
    const key = await cw.keyWith(['content:read']);
    const first = await get('/content?limit=2', key);
    expect(first.statusCode, first.body).toBe(200);
    const before = answered();
    const used = await commandsDuring(async () => {
      const again = await get('/content?limit=2', key);
      expect(again.body).toBe(first.body);
      expect(stableHeaders(again)).toEqual(stableHeaders(first));
      expect(again.headers['x-request-id']).toBeTruthy();
    });
    expect(answered()).toBe(before + 1);
    // Counting only (in the database, or a block of positions leased for the next ones); no content query.
    expect(used.length).toBeGreaterThan(0);
    expect(countingOnly(used)).toEqual([]);

    const notModified = await get('/content?limit=2', key, { 'if-none-match': String(first.headers.etag) });
    expect(notModified.statusCode).toBe(304);
    expect(notModified.body).toBe('');
    expect(answered()).toBe(before + 2);
    // Another key does not get the first key's answer (its own scope, its own count).
    const other = await cw.keyWith(['content:read']);
    expect((await get('/content?limit=2', other)).statusCode).toBe(200);
    expect(answered()).toBe(before + 2);
  });

  it('counts a busy key from leased blocks: a hundred held reads cost a few counter statements and no other', async () => {
    const key = await cw.keyWith(['content:read']);
    await get('/content?limit=4', key);
    const before = answered();
    const remaining: number[] = [];
    const used = await commandsDuring(async () => {
      for (let i = 0; i < 100; i++) {
        const answer = await get('/content?limit=4', key);
        expect(answer.statusCode).toBe(200);
        remaining.push(Number(/"key";r=(\d+)/.exec(String(answer.headers.ratelimit))![1]));
      }
    });
    expect(answered()).toBe(before + 100);
    expect(countingOnly(used)).toEqual([]);
    expect(used.length).toBeLessThan(10);
    // Each request its own position in the window: no remaining count is handed out twice.
    expect(new Set(remaining).size).toBe(100);
  });

  it('the next read after a write through this gateway shows it', async () => {
    const key = await cw.keyWith(['content:read']);
    const titles = async () => (await get('/content?limit=5', key)).json().data.map((row: { title: string }) => row.title);
    await titles();
    await titles();
    const before = answered();
    for (let round = 0; round < 5; round++) {
      const created = await cw.create({ title: `Written ${round}`, slug: `written-${round}` });
      expect((await titles())[0]).toBe(`Written ${round}`);
      const renamed = await cw.manage('PATCH', `/content/${created.id}`, { title: `Renamed ${round}` });
      expect(renamed.statusCode, renamed.body).toBe(200);
      // Its search postings land a moment after the write answers, and the held list reads their
      // collection too (a search is held with it): a write of theirs moves the database's generation.
      await cw.world.services.searchSync.settled();
      expect((await titles())[0]).toBe(`Renamed ${round}`);
      // Held again once read after the write.
      expect((await titles())[0]).toBe(`Renamed ${round}`);
    }
    expect(answered()).toBeGreaterThanOrEqual(before + 5);
  });

  it('a write made by another process reaches this gateway through the feed, and the old answer never comes back', async () => {
    const key = await cw.keyWith(['content:read']);
    const first = async () => (await get('/content?limit=1', key)).json().data[0].title as string;
    await first();
    await first();
    const other = await createRuntime(cw.world.config);
    const otherApp = await other.buildApp({ logger: false });
    try {
      const written = await otherApp.inject({
        method: 'POST',
        url: '/api/manage/v1/content',
        headers: { authorization: `Bearer ${cw.key}` },
        payload: { title: 'From elsewhere', slug: 'from-elsewhere' },
      });
      expect(written.statusCode, written.body).toBe(201);
      await eventually(async () => (await first()) === 'From elsewhere', "the other process's write seen", 10_000);
      for (let i = 0; i < 5; i++) expect(await first()).toBe('From elsewhere');
    } finally {
      await otherApp.close();
      await closeServices(other.services);
    }
  });

  it('a revoked key and the Management API switched off are refused on the next request', async () => {
    const { key, id } = await createApiKey(cw.world, { capabilities: ['content:read'] });
    await get('/content?limit=2', key);
    expect((await get('/content?limit=2', key)).statusCode).toBe(200);
    await setManagementApi(cw.world, false);
    const off = await get('/content?limit=2', key);
    expect(off.statusCode).toBe(403);
    expect(off.json()).toEqual({ error: 'Forbidden' });
    await setManagementApi(cw.world, true);
    expect((await get('/content?limit=2', key)).statusCode).toBe(200);
    const session = await signIn(cw.world);
    const revoked = await cw.world.app.inject({
      method: 'POST',
      url: `/api/api-keys/${id}/revoke`,
      headers: { cookie: session.cookie, origin: session.origin },
    });
    expect(revoked.statusCode, revoked.body).toBe(200);
    const refused = await get('/content?limit=2', key);
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual({ error: 'Unauthorized' });
  });

  it('counts every request once, lane or full path: a key limited to 4 gets 4 answers, then 429', async () => {
    await freshWindow(20);
    const { key } = await createApiKey(cw.world, { capabilities: ['content:read'], rateLimitPerMin: 4 });
    const remaining: string[] = [];
    for (let i = 0; i < 4; i++) {
      const answer = await get('/content?limit=3', key);
      expect(answer.statusCode, answer.body).toBe(200);
      remaining.push(/"key";r=(\d+)/.exec(String(answer.headers.ratelimit))![1]);
    }
    expect(remaining).toEqual(['3', '2', '1', '0']);
    const over = await get('/content?limit=3', key);
    expect(over.statusCode).toBe(429);
    expect(over.headers['retry-after']).toBeTruthy();
    expect(over.json().error).toBeTruthy();
  });

  it('counts keyed writes from leased blocks too: a few counter statements for many writes, one position each, and never past the limit', async () => {
    await freshWindow(20);
    const limit = 100;
    const { key } = await createApiKey(cw.world, { capabilities: ['content:create'], rateLimitPerMin: limit });
    const tag = `leased-${Date.now()}`;
    const create = (i: number) =>
      cw.world.app.inject({ method: 'POST', url: '/api/manage/v1/content', headers: { authorization: `Bearer ${key}` }, payload: { title: `${tag} ${i}` } });
    expect((await create(0)).statusCode).toBe(201);
    const remaining: number[] = [];
    const used = await commandsDuring(async () => {
      for (let i = 1; i < 40; i++) {
        const answer = await create(i);
        expect(answer.statusCode, answer.body).toBe(201);
        remaining.push(Number(/"key";r=(\d+)/.exec(String(answer.headers.ratelimit))![1]));
      }
    });
    // Counted from blocks this gateway leased (one statement per block), not two statements a write.
    expect(used.filter((command) => COUNTING.includes(command)).length).toBeLessThan(12);
    // Each write the next position of the window, one by one.
    expect(remaining).toEqual(Array.from({ length: 39 }, (_, i) => limit - 2 - i));
    // Below the lease floor the rest is counted in the database; the limit holds exactly.
    const statuses: number[] = [];
    for (let i = 40; i < limit + 3; i++) statuses.push((await create(i)).statusCode);
    expect(statuses.filter((status) => status === 201)).toHaveLength(limit - 40);
    expect(statuses.slice(limit - 40)).toEqual([429, 429, 429]);
    const scope = (await cw.world.services.sites.resolve('localhost'))!;
    const created = await cw.world.services
      .workspaceDb(scope.workspace)
      .collection('content_entries')
      .countDocuments({ title: { $regex: `^${tag} ` } });
    expect(created).toBe(limit);
  });

  it('database writes ride with the next feed row written within their window, else get their own when it ends', async () => {
    const rows: string[][] = [];
    const listener = (event: CommandStartedEvent) => {
      if (event.commandName === 'insert' && event.command.insert === 'state_changes')
        rows.push(...(event.command.documents as { topics: string[] }[]).map((doc) => doc.topics));
    };
    // This test's topics in each row (another test's writes may ride along too).
    const ridden = () => rows.map((topics) => topics.filter((topic) => topic.startsWith('ride-test:'))).filter((topics) => topics.length > 0);
    const feed = cw.world.services.changeFeed;
    cw.world.services.mongo.on('commandStarted', listener);
    try {
      feed.announceWithin('ride-test:a', 5_000);
      feed.announceWithin('ride-test:b', 5_000);
      await feed.announce('ride-test:c');
      expect(ridden()).toEqual([['ride-test:a', 'ride-test:b', 'ride-test:c']]);
      feed.announceWithin('ride-test:d', 20);
      await eventually(async () => rows.some((topics) => topics.includes('ride-test:d')), 'the rider written on its own', 5_000, 5);
      expect(ridden()).toEqual([['ride-test:a', 'ride-test:b', 'ride-test:c'], ['ride-test:d']]);
    } finally {
      cw.world.services.mongo.off('commandStarted', listener);
    }
  });

  it("a wrong secret with a held key's lookup spends nothing of the key's budget: the key still gets all of it", async () => {
    await freshWindow(20);
    const { key } = await createApiKey(cw.world, { capabilities: ['content:read'], rateLimitPerMin: 4 });
    expect((await get('/content?limit=1', key)).statusCode).toBe(200);
    const before = answered();
    expect((await get('/content?limit=1', key)).statusCode).toBe(200);
    expect(answered()).toBe(before + 1);
    // The key's lookup part with another secret: the lane holds the key and its answer, yet counts nothing.
    const forged = `${key.slice(0, 16)}${key[16] === 'A' ? 'B' : 'A'}${key.slice(17)}`;
    const refused = await Promise.all(Array.from({ length: 10 }, () => get('/content?limit=1', forged)));
    expect(refused.map((answer) => answer.statusCode)).toEqual(Array(10).fill(401));
    for (const answer of refused) expect(answer.json()).toEqual({ error: 'Unauthorized' });
    expect(answered()).toBe(before + 1);
    const remaining: string[] = [];
    for (let i = 0; i < 2; i++) {
      const answer = await get('/content?limit=1', key);
      expect(answer.statusCode, answer.body).toBe(200);
      remaining.push(/"key";r=(\d+)/.exec(String(answer.headers.ratelimit))![1]);
    }
    expect(remaining).toEqual(['1', '0']);
    expect((await get('/content?limit=1', key)).statusCode).toBe(429);
  });

  it('a held operation reads nothing but the collections it declares', async () => {
    const entry = await cw.create({ title: 'Declared', slug: 'declared' });
    // The create's audit row is written a moment after its answer: not a read of what follows.
    await cw.world.services.audit.settled();
    const urls: Record<string, string> = { 'content.list': '/content?limit=2', 'content.get': `/content/${entry.id}` };
    const held = cw.world.services.features.flatMap((feature) => feature.operations).filter((operation) => operation.heldAnswer);
    expect(held.map((operation) => operation.id).sort()).toEqual(Object.keys(urls).sort());
    for (const operation of held) {
      // The first call fills the key cache; the second shows what the operation itself reads
      // (`inject` takes the full path: the lane is in the HTTP server).
      await cw.manage('GET', urls[operation.id]);
      const used = await commandsDuring(async () => expect((await cw.manage('GET', urls[operation.id])).statusCode).toBe(200));
      const read = countingOnly(used).map((command) => command.split(' ')[1]);
      expect(read.length, operation.id).toBeGreaterThan(0);
      for (const collection of read) expect(operation.heldAnswer!.reads, `${operation.id} read ${collection}`).toContain(collection);
    }
  });
});
