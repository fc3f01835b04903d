import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startWorld, type World } from '../support/world.ts';
import { createApiKey } from '../support/access.ts';
import { freshWindow } from '../access/world-helpers.ts';

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

  it("counts every tool call of a JSON-RPC batch: past the key's budget the rest are 429 tool errors and nothing of theirs runs", async () => {
    const limit = 3;
    const calls = 7;
    await freshWindow(20);
    const { key } = await createApiKey(world, { capabilities: ['content:create', 'content:read'], rateLimitPerMin: limit });
    const tag = `batch-${Date.now()}`;
    const remoteAddress = '203.0.113.77';
    const batch = Array.from({ length: calls }, (_, i) => ({
      jsonrpc: '2.0',
      id: i + 1,
      method: 'tools/call',
      params: { name: 'content_create', arguments: { title: `${tag} ${i}`, slug: `${tag}-${i}` } },
    }));
    const response = await world.app.inject({
      method: 'POST',
      url: '/api/mcp',
      headers: { authorization: `Bearer ${key}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
      payload: batch,
      remoteAddress,
    });
    expect(response.statusCode).toBe(200);
    const answers = response.json() as Array<{ id: number; result: { isError?: boolean; content: Array<{ text: string }> } }>;
    expect(answers).toHaveLength(calls);
    const refused = answers.filter((answer) => answer.result.isError);
    expect(answers.filter((answer) => !answer.result.isError)).toHaveLength(limit);
    expect(refused).toHaveLength(calls - limit);
    // The same tool error a single call over the budget gets.
    for (const answer of refused) expect(JSON.parse(answer.result.content[0].text)).toEqual({ error: 'Too many requests', status: 429 });
    const single = await (await connect(key)).callTool({ name: 'content_list', arguments: {} });
    expect(single.isError).toBe(true);
    expect(JSON.parse((single.content as Array<{ text: string }>)[0].text)).toEqual({ error: 'Too many requests', status: 429 });

    // Only the admitted calls ran: exactly `limit` entries exist.
    const { key: reader } = await createApiKey(world, { capabilities: ['content:read'] });
    const listed = await world.app.inject({ url: '/api/manage/v1/content?limit=100&status=draft', headers: { authorization: `Bearer ${reader}` } });
    expect(listed.statusCode).toBe(200);
    expect(listed.json().data.filter((entry: { title: string }) => entry.title.startsWith(tag))).toHaveLength(limit);
  });

  it("a batch spends the IP's budget too, one per tool call", async () => {
    await freshWindow(20);
    const { key } = await createApiKey(world, { capabilities: ['users:read'], rateLimitPerMin: 1000 });
    const remoteAddress = '203.0.113.78';
    const calls = 5;
    const batch = Array.from({ length: calls }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'users_list', arguments: {} } }));
    const response = await world.app.inject({
      method: 'POST',
      url: '/api/mcp',
      headers: { authorization: `Bearer ${key}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
      payload: batch,
      remoteAddress,
    });
    expect((response.json() as Array<{ result: { isError?: boolean } }>).every((answer) => !answer.result.isError)).toBe(true);
    // The next request from that address holds position calls + 1 in both windows.
    const next = await world.app.inject({ url: '/api/manage/v1/users', headers: { authorization: `Bearer ${key}` }, remoteAddress });
    expect(next.statusCode).toBe(200);
    const remaining = (name: string) => Number(new RegExp(`"${name}";r=(\\d+)`).exec(String(next.headers.ratelimit))![1]);
    expect(remaining('key')).toBe(1000 - calls - 1);
    const ipLimit = Number(/"ip";q=(\d+)/.exec(String(next.headers['ratelimit-policy']))![1]);
    expect(remaining('ip')).toBe(ipLimit - calls - 1);
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
