import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startWorld, type World } from '../support/world.ts';
import { createApiKey } from '../support/access.ts';
import { caller, operatorKey, type Call } from './support.ts';

/** Each switch off → the feature refuses (403 naming it); on → it works. Set through the API. */
describe('platform feature switches', () => {
  let world: World;
  let operator: string;
  let call: Call;
  let siteId: string;
  let base: string;
  const setSite = (quotas: Record<string, unknown>) => call('PUT', `/sites/${siteId}/quotas`, { quotas });
  const setTenant = (quotas: Record<string, unknown>) => call('PUT', `/tenants/${world.defaultWorkspace.id}/quotas`, { quotas });
  const refused = (res: { statusCode: number; json(): unknown }, name: string) => {
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: `Feature switched off: ${name}` });
  };

  beforeAll(async () => {
    world = await startWorld({ worker: true, env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    operator = await operatorKey(world);
    call = caller(world, () => operator);
    siteId = (await call('GET', `/tenants/${world.defaultWorkspace.id}`)).json().sites[0].id;
    base = await world.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => world?.close());

  it('graphql (workspace level)', async () => {
    const query = () => world.app.inject({ method: 'POST', url: '/api/v1/graphql', payload: { query: '{ __typename }' } });
    await setTenant({ graphql: false });
    refused(await query(), 'graphql');
    expect((await call('GET', `/sites/${siteId}/usage`)).json().switches.graphql).toBe(false);
    await setTenant({ graphql: true });
    expect((await query()).statusCode).toBe(200);
  });

  it('mcp', async () => {
    const { key } = await createApiKey(world, { capabilities: ['content:read'] });
    const url = `${base.replace('127.0.0.1', 'localhost')}/api/mcp`;
    await setSite({ mcp: false });
    const raw = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(raw.status).toBe(403);
    expect(await raw.json()).toEqual({ error: 'Feature switched off: mcp' });
    await setSite({});
    const client = new Client({ name: 't', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('content_list');
    await client.close();
  });

  it('webhooks: no endpoint creation and no delivery while off', async () => {
    const deliveries = () => world.services.workspaceDb({ dbName: world.defaultWorkspace.dbName }).collection('webhook_deliveries').countDocuments({});
    const created = await call('POST', '/webhooks', { name: 'before', url: 'http://127.0.0.1:9/hook', events: ['content.created'] });
    expect(created.statusCode).toBe(201);
    await setSite({ webhooks: false });
    refused(await call('POST', '/webhooks', { name: 'off', url: 'http://127.0.0.1:9/off', events: ['content.created'] }), 'webhooks');
    const before = await deliveries();
    expect((await call('POST', '/content', { title: 'Silent' })).statusCode).toBe(201);
    expect(await deliveries()).toBe(before);
    await setSite({});
    expect((await call('POST', '/content', { title: 'Loud' })).statusCode).toBe(201);
    expect(await deliveries()).toBe(before + 1);
    expect((await call('POST', '/webhooks', { name: 'on', url: 'http://127.0.0.1:9/on', events: ['content.created'] })).statusCode).toBe(201);
    expect((await call('DELETE', `/webhooks/${created.json().endpoint.id}`)).statusCode).toBeLessThan(300);
  });

  it('staticExport', async () => {
    const { key } = await createApiKey(world, { capabilities: ['settings:manage'] });
    await setSite({ staticExport: false });
    refused(await call('POST', '/static-export/run', { mode: 'full' }, key), 'staticExport');
    await setSite({});
    expect((await call('POST', '/static-export/run', { mode: 'full' }, key)).statusCode).toBe(202);
  });

  it('plugins', async () => {
    const { key } = await createApiKey(world, { capabilities: ['plugins:activate', 'plugins:read'] });
    await setSite({ plugins: false });
    refused(await call('POST', '/plugins/seo-fields/activate', {}, key), 'plugins');
    const listed = (await call('GET', '/plugins?limit=200', undefined, key)).json().data.find((p: { id: string }) => p.id === 'seo-fields');
    expect(listed).toMatchObject({ active: false });
    await setSite({});
    expect((await call('POST', '/plugins/seo-fields/activate', {}, key)).statusCode).toBe(200);
  });

  it('comments', async () => {
    const entry = (await call('POST', '/content', { title: 'Talk', slug: 'talk' })).json();
    expect((await call('POST', `/content/${entry.id}/publish`, {})).statusCode).toBe(200);
    const comment = () =>
      world.app.inject({
        method: 'POST',
        url: '/api/comments/v1/content/talk/comments',
        payload: { authorName: 'Ann', authorEmail: 'ann@example.test', body: 'Nice post' },
      });
    await setSite({ comments: false });
    refused(await comment(), 'comments');
    await setSite({});
    expect((await comment()).statusCode).toBe(201);
  });
});
