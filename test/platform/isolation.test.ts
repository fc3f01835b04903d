import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { multipartBody, pdfOfSize } from '../media/support.ts';
import { caller, createTenant, keyOnHost, operatorKey, type Call } from './support.ts';
import { CAPABILITIES } from '../../services/core/capabilities.ts';

/** A key, cursor or id of workspace A never reads or writes workspace B (and back). */
describe('adversarial isolation between workspaces', () => {
  let world: World;
  let call: Call;
  let operator: string;
  const a = { host: 'a.iso.example.test', key: '', entry: '', media: '', hook: '' };
  const b = { host: 'b.iso.example.test', key: '', entry: '', media: '', hook: '' };

  beforeAll(async () => {
    world = await startWorld({ worker: true, env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', LIFECYCLE_WAIT_MS: '60000' } });
    operator = await operatorKey(world);
    call = caller(world, () => operator);
    for (const side of [a, b]) {
      await createTenant(call, `Iso ${side.host}`, side.host);
      side.key = await keyOnHost(world, side.host, [...CAPABILITIES]);
      side.entry = (await call('POST', '/content', { title: `Secret of ${side.host}` }, side.key, side.host)).json().id;
      await call('POST', '/content', { title: `Second of ${side.host}` }, side.key, side.host);
      const body = multipartBody('doc.pdf', pdfOfSize(300));
      const up = await world.app.inject({
        method: 'POST',
        url: '/api/manage/v1/media',
        payload: body.payload,
        headers: { authorization: `Bearer ${side.key}`, host: side.host, ...body.headers },
      });
      side.media = up.json().id;
      side.hook = (
        await call('POST', '/webhooks', { name: 'h', url: 'http://127.0.0.1:9/h', events: ['content.created'] }, side.key, side.host)
      ).json().endpoint.id;
    }
  });
  afterAll(() => world?.close());

  it("a key only works on its own workspace's hosts (Host spoofing is a generic 401)", async () => {
    const spoofed = await call('GET', '/content', undefined, a.key, b.host);
    expect(spoofed.statusCode).toBe(401);
    expect(spoofed.json()).toEqual({ error: 'Unauthorized' });
    expect((await call('GET', '/content', undefined, a.key, 'localhost')).statusCode).toBe(401);
    expect((await call('GET', '/content', undefined, a.key, a.host)).statusCode).toBe(200);
  });

  it('guessed ids of the other workspace are 404 for reads and writes, and change nothing', async () => {
    expect((await call('GET', `/content/${b.entry}`, undefined, a.key, a.host)).statusCode).toBe(404);
    expect((await call('PATCH', `/content/${b.entry}`, { title: 'pwned' }, a.key, a.host)).statusCode).toBe(404);
    expect((await call('DELETE', `/content/${b.entry}`, undefined, a.key, a.host)).statusCode).toBe(404);
    expect((await call('GET', `/media/${b.media}`, undefined, a.key, a.host)).statusCode).toBe(404);
    expect((await call('PUT', `/webhooks/${b.hook}`, { name: 'pwned' }, a.key, a.host)).statusCode).toBe(404);
    expect((await call('DELETE', `/webhooks/${b.hook}`, undefined, a.key, a.host)).statusCode).toBe(404);
    expect((await call('GET', `/content/${b.entry}`, undefined, b.key, b.host)).json().title).toBe(`Secret of ${b.host}`);
    const hooks = (await call('GET', '/webhooks', undefined, b.key, b.host)).json().data;
    expect(hooks.map((h: { id: string; name: string }) => [h.id, h.name])).toEqual([[b.hook, 'h']]);
    expect((await call('GET', '/webhooks', undefined, a.key, a.host)).json().data.map((h: { id: string }) => h.id)).toEqual([a.hook]);
  });

  it("media files of one workspace are not served on the other's hosts", async () => {
    const own = await world.app.inject({ url: `/media/files/${a.media}/doc.pdf`, headers: { host: a.host } });
    expect(own.statusCode).toBe(200);
    const foreign = await world.app.inject({ url: `/media/files/${a.media}/doc.pdf`, headers: { host: b.host } });
    expect(foreign.statusCode).toBe(404);
  });

  it('a cursor of workspace A is refused on workspace B', async () => {
    const page = (await call('GET', '/content?limit=1', undefined, a.key, a.host)).json();
    expect(page.page.nextCursor).toBeTruthy();
    const foreign = await call('GET', `/content?limit=1&cursor=${encodeURIComponent(page.page.nextCursor)}`, undefined, b.key, b.host);
    expect(foreign.statusCode).toBe(400);
  });

  it("a workspace administrator's key reaches no platform route, nor the other workspace's usage", async () => {
    for (const [method, url] of [
      ['GET', '/tenants'],
      ['GET', '/operators'],
      ['PUT', '/tenants/x/quotas'],
      ['GET', `/tenants/${world.defaultWorkspace.id}/usage`],
    ]) {
      const res = await call(method, url, method === 'PUT' ? { quotas: {} } : undefined, a.key, a.host);
      expect(res.statusCode, url).toBe(403);
    }
  });

  it("an MCP session with A's key cannot be opened on B's host", async () => {
    const res = await world.app.inject({
      method: 'POST',
      url: '/api/mcp',
      headers: { authorization: `Bearer ${a.key}`, host: b.host, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    expect(res.statusCode).toBe(401);
  });
});
