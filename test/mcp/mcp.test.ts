import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startWorld, type World } from '../support/world.ts';
import { createApiKey } from '../support/access.ts';

describe('MCP endpoint', () => {
  let world: World;
  let base: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    world = await startWorld();
    base = await world.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    await world?.close();
  });

  async function connect(key: string) {
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${base.replace('127.0.0.1', 'localhost')}/api/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  it('lists only the tools the key can use', async () => {
    const { key } = await createApiKey(world, { capabilities: ['users:read'] });
    const client = await connect(key);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('users_list');
    expect(names).not.toContain('users_create');
    expect(names).not.toContain('content_create');
    for (const tool of (await client.listTools()).tools) expect(tool.inputSchema.type).toBe('object');
  });

  it('runs a tool through the same operation as REST and returns the same data', async () => {
    const { key } = await createApiKey(world, { capabilities: ['users:read'] });
    const client = await connect(key);
    const result = await client.callTool({ name: 'users_list', arguments: { limit: 10 } });
    expect(result.isError).toBeFalsy();
    const rest = await world.app.inject({ url: '/api/manage/v1/users?limit=10', headers: { authorization: `Bearer ${key}` } });
    expect(rest.statusCode).toBe(200);
    expect(result.structuredContent).toEqual(rest.json());
  });

  it('refuses a tool beyond the key as if it did not exist, and changes nothing', async () => {
    const { key } = await createApiKey(world, { capabilities: ['users:read'] });
    const client = await connect(key);
    const before = (await world.app.inject({ url: '/api/manage/v1/users', headers: { authorization: `Bearer ${key}` } })).json();
    const result = await client.callTool({
      name: 'users_create',
      arguments: { email: 'sneaky@example.test', password: 'long enough password', role: 'administrator' },
    });
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: 'Unknown tool' }]);
    const after = (await world.app.inject({ url: '/api/manage/v1/users', headers: { authorization: `Bearer ${key}` } })).json();
    expect(after).toEqual(before);
  });

  it('reports validation failures as tool errors with the field named', async () => {
    const { key } = await createApiKey(world, { capabilities: ['users:read'] });
    const client = await connect(key);
    const result = await client.callTool({ name: 'users_list', arguments: { limit: 999 } });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toMatch(/limit/);
  });

  it('answers 401 without a valid key', async () => {
    for (const authorization of [undefined, 'Bearer svk_not-a-key']) {
      const response = await world.app.inject({
        method: 'POST',
        url: '/api/mcp',
        headers: { ...(authorization ? { authorization } : {}), accept: 'application/json, text/event-stream' },
        payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      });
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual({ error: 'Unauthorized' });
    }
  });
});
