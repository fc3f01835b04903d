import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenRecordingCommands, socketGet, type SocketAnswer } from '../support/listening-gateway.ts';
import { startContentWorld, signIn, type ContentWorld } from './support.ts';
import { eventually } from '../support/polling.ts';

// The public cache-hit lane (docs/content.md, "Public read cache"): a repeated public read is sent
// again from memory — same bytes, same ETag, no database command — and stays exact: the next read
// after a write, a switch or a suspension shows it. The lane sits in front of Fastify in the HTTP
// server, so these reads go over a socket to a listening gateway (`inject` would bypass it).
let cw: ContentWorld;
let commandsDuring: (run: () => Promise<unknown>) => Promise<string[]>;
let port = 0;

/** A public GET over a real connection to the listening gateway. */
const pub = (url: string, headers: Record<string, string> = {}) => socketGet(port, `/api/v1${url}`, headers);

/** Header names and values in the order sent, without the ones that differ on every answer. */
const stableHeaders = (answer: SocketAnswer) => Object.entries(answer.headers).filter(([name]) => !['date', 'x-request-id'].includes(name));

beforeAll(async () => {
  cw = await startContentWorld({ monitorCommands: true });
  ({ port, commandsDuring } = await listenRecordingCommands(cw.world));
  for (let i = 0; i < 3; i++) {
    const entry = await cw.create({ title: `Lane ${i}`, slug: `lane-${i}` });
    await cw.manage('POST', `/content/${entry.id}/publish`);
  }
});
afterAll(async () => cw?.close());

describe('public cache-hit lane', () => {
  it('answers a repeated read with the same bytes and ETag and no database command; 304 on If-None-Match', async () => {
    // The full path: the first read of a URL (another spelling of the same query is another URL).
    const first = await pub('/content?limit=2');
    expect(first.statusCode, first.body).toBe(200);
    const etag = String(first.headers.etag);
    expect(etag).toMatch(/^W\/"/);
    const fullPathNotModified = await pub('/content?limit=002', { 'if-none-match': etag, 'x-request-id': 'full-path-304' });
    expect(fullPathNotModified.statusCode).toBe(304);
    // The setup's own writes reach this gateway through its feed a poll later (later still on a
    // busy machine, and over several polls), and each drops the held state once: wait until reads
    // spread over several polls are all served from memory.
    const deadline = Date.now() + 20_000;
    const readsOverSeveralPolls = async () => {
      for (let i = 0; i < 5; i++) {
        await pub('/content?limit=2');
        await new Promise((resolve) => setTimeout(resolve, 60));
      }
    };
    while ((await commandsDuring(readsOverSeveralPolls)).length > 0 && Date.now() < deadline);
    const lane = cw.world.app.publicLane;
    const answeredBefore = lane.answered;
    const used = await commandsDuring(async () => {
      for (let i = 0; i < 20; i++) {
        const again = await pub('/content?limit=2');
        expect(again.statusCode).toBe(200);
        expect(again.body).toBe(first.body);
        expect(again.headers.etag).toBe(etag);
        expect(again.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(again.headers['x-request-id']).toBeTruthy();
        // The same headers, in the same order, as the full path sent.
        expect(stableHeaders(again)).toEqual(stableHeaders(first));
      }
      const unchanged = await pub('/content?limit=2', { 'if-none-match': etag, 'x-request-id': 'lane-304' });
      expect(unchanged.statusCode).toBe(304);
      expect(unchanged.body).toBe('');
      expect(stableHeaders(unchanged)).toEqual(stableHeaders(fullPathNotModified));
      expect([unchanged.headers['x-request-id'], fullPathNotModified.headers['x-request-id']]).toEqual(['lane-304', 'full-path-304']);
    });
    expect(used).toEqual([]);
    // Every one of them was answered in front of Fastify.
    expect(lane.answered - answeredBefore).toBe(21);
  });

  it('shows a content write on the next read', async () => {
    const entry = await cw.create({ title: 'Before', slug: 'lane-write' });
    await cw.manage('POST', `/content/${entry.id}/publish`);
    for (let i = 0; i < 3; i++) expect((await pub('/content/lane-write')).json().title).toBe('Before');
    await cw.manage('PATCH', `/content/${entry.id}`, { title: 'After', status: 'published' });
    expect((await pub('/content/lane-write')).json().title).toBe('After');
    await cw.manage('POST', `/content/${entry.id}/unpublish`);
    expect((await pub('/content/lane-write')).statusCode).toBe(404);
  });

  it('shows the Public API switched off on the next read, and back on', async () => {
    for (let i = 0; i < 3; i++) expect((await pub('/content/lane-1')).statusCode).toBe(200);
    expect((await cw.manage('PATCH', '/settings', { api: { publicEnabled: false } })).statusCode).toBe(200);
    expect((await pub('/content/lane-1')).statusCode).toBe(404);
    expect((await pub('/content/lane-1')).json()).toEqual({ error: expect.any(String) });
    expect((await cw.manage('PATCH', '/settings', { api: { publicEnabled: true } })).statusCode).toBe(200);
    expect((await pub('/content/lane-1')).statusCode).toBe(200);
  });

  it('never serves a signed-in editor from the lane: a preview shows the working revision', async () => {
    const entry = await cw.create({ title: 'Published title', slug: 'lane-preview' });
    await cw.manage('POST', `/content/${entry.id}/publish`);
    await cw.manage('PATCH', `/content/${entry.id}`, { title: 'Working title' });
    for (let i = 0; i < 3; i++) expect((await pub('/content/lane-preview?preview=1')).json().title).toBe('Published title');
    const { cookie } = await signIn(cw.world);
    expect((await pub('/content/lane-preview?preview=1', { cookie })).json().title).toBe('Working title');
    expect((await pub('/content/lane-preview')).json().title).toBe('Published title');
  });

  it('goes back to the database when the change feed stops vouching for this process', async () => {
    const feed = cw.world.services.changeFeed;
    await pub('/content/lane-2');
    expect(await commandsDuring(() => pub('/content/lane-2'))).toEqual([]);
    feed.cut(1000);
    const used = await commandsDuring(async () => expect((await pub('/content/lane-2')).statusCode).toBe(200));
    expect(used.length).toBeGreaterThan(0);
    // Back under the feed (a new session starts with empty caches): memory again after one read.
    await eventually(() => feed.trusted(), 'the change feed back', 15_000);
    await pub('/content/lane-2');
    expect(await commandsDuring(() => pub('/content/lane-2'))).toEqual([]);
  });
});
