import { readFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createManagementClient, createPublicClient, pages } from '../../client/src/index.ts';
import { generateClientTypes } from '../../scripts/client-types.ts';
import { startWorld, type World } from '../support/world.ts';
import { createApiKey, defaultSiteContext } from '../support/access.ts';
import { contentCollections, emptyBlocks, type EntryDoc } from '../../services/content/model.ts';
import { newId } from '../../services/core/ids.ts';

const CAPABILITIES = ['content:read', 'content:create', 'content:publish'] as const;

describe('typed client (client/)', () => {
  it('has committed declarations equal to a fresh generation from the registry', async () => {
    const fresh = await generateClientTypes();
    expect(Object.keys(fresh).sort()).toEqual(['management.d.ts', 'public.d.ts']);
    for (const [file, text] of Object.entries(fresh)) {
      // A difference means an operation changed: run `npm run build:client` and commit the result.
      expect(readFileSync(new URL(`../../client/src/${file}`, import.meta.url), 'utf8'), file).toBe(text);
    }
  });

  describe('against a running gateway', () => {
    let world: World;
    let baseUrl: string;
    let port: number;
    beforeAll(async () => {
      world = await startWorld();
      await world.app.listen({ port: 0, host: '127.0.0.1' });
      port = (world.app.server.address() as { port: number }).port;
      baseUrl = `http://127.0.0.1:${port}`;
    });
    afterAll(() => world?.close());

    it('creates an entry through the management client and reads it through the public client', async () => {
      const { key } = await createApiKey(world, { capabilities: [...CAPABILITIES] });
      const manage = createManagementClient({ baseUrl, apiKey: key });
      const created = await manage.POST('/content', { body: { title: 'Typed hello', type: 'post' } });
      expect(created.response.status).toBe(201);
      const id = created.data!.id;
      expect(created.data!.status).toBe('draft');
      const published = await manage.POST('/content/{id}/publish', { params: { path: { id } }, body: {} });
      expect(published.data?.status).toBe('published');

      const read = await createPublicClient({ baseUrl }).GET('/content/{slug}', { params: { path: { slug: created.data!.slug } } });
      expect(read.response.status).toBe(200);
      expect(read.data?.title).toBe('Typed hello');

      const refused = await createManagementClient({ baseUrl, apiKey: 'svk_not-a-key' }).GET('/content', {});
      expect(refused.response.status).toBe(401);
      expect(refused.error).toEqual({ error: 'Unauthorized' });
    });

    it('pages through a list of 250 entries by its cursor, on both surfaces', async () => {
      const { key } = await createApiKey(world, { capabilities: [...CAPABILITIES] });
      const manage = createManagementClient({ baseUrl, apiKey: key });
      const ctx = await defaultSiteContext(world);
      // Setup only: 250 published pages written directly (the paging is what is tested).
      const now = Date.now();
      const docs: EntryDoc[] = Array.from({ length: 250 }, (_, i) => {
        const snapshot = { title: `Paged ${i}`, titleLower: `paged ${i}`, slug: `paged-${i}`, excerpt: null, blocks: emptyBlocks(), fields: {} };
        return {
          _id: newId(now + i),
          siteId: ctx.site._id,
          type: 'page',
          ...snapshot,
          locale: 'en',
          status: 'published',
          live: snapshot,
          publishedAt: new Date(now),
          authorId: null,
          terms: {},
          headerRef: { mode: 'default' },
          schedule: null,
          createdAt: new Date(now),
          updatedAt: new Date(now),
          version: 1,
          trashedAt: null,
        };
      });
      await contentCollections(ctx.db).entries.insertMany(docs);
      const created = new Set(docs.map((doc) => doc._id));

      const managed: string[] = [];
      let managePages = 0;
      for await (const page of pages((cursor) => manage.GET('/content', { params: { query: { type: 'page', limit: 100, cursor } } }))) {
        managePages++;
        managed.push(...page.data.map((entry) => entry.id));
      }
      expect(managePages).toBe(3);
      expect(managed).toHaveLength(250);
      expect(new Set(managed)).toEqual(created);

      const slugs: string[] = [];
      const client = createPublicClient({ baseUrl });
      for await (const page of pages((cursor) => client.GET('/content', { params: { query: { type: 'page', limit: 100, cursor } } }))) {
        slugs.push(...page.items.map((entry) => entry.slug));
      }
      expect(new Set(slugs)).toEqual(new Set(docs.map((doc) => doc.slug)));
      expect(slugs).toHaveLength(250);
    });

    it('waits out a 429 or 503 for the Retry-After it names and sends the request again, body included', async () => {
      const { key } = await createApiKey(world, { capabilities: [...CAPABILITIES] });
      // A loopback proxy that refuses the first request of each kind, then forwards to the gateway.
      const seen: string[] = [];
      const proxy = await refusingProxy(port, (method): Refusal => {
        seen.push(method);
        if (seen.filter((m) => m === method).length > 1) return undefined;
        return method === 'GET' ? { status: 429, headers: { 'retry-after': '1' } } : { status: 503, headers: { ratelimit: '"key";r=0;t=1' } };
      });
      try {
        const proxied = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
        const manage = createManagementClient({ baseUrl: proxied, apiKey: key });
        const started = Date.now();
        const created = await manage.POST('/content', { body: { title: 'Sent twice, stored once', type: 'post' } });
        expect(created.response.status).toBe(201);
        const listed = await manage.GET('/content', { params: { query: { search: 'stored once' } } });
        expect(listed.response.status).toBe(200);
        expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
        expect(seen).toEqual(['POST', 'POST', 'GET', 'GET']);
        expect(listed.data!.data.map((entry) => entry.id)).toEqual([created.data!.id]);
      } finally {
        await new Promise((resolve) => proxy.close(resolve));
      }
    });

    it("hands the gateway's own 429 back when it asks for a longer wait than the client accepts", async () => {
      const { key } = await createApiKey(world, { capabilities: ['content:read'], rateLimitPerMin: 1 });
      const manage = createManagementClient({ baseUrl, apiKey: key, retry: { maxDelayMs: 200 } });
      expect((await manage.GET('/content', {})).response.status).toBe(200);
      const started = Date.now();
      const limited = await manage.GET('/content', {});
      expect(limited.response.status).toBe(429);
      expect(Number(limited.response.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(limited.error).toEqual({ error: expect.any(String) });
      expect(Date.now() - started).toBeLessThan(1000);
    });
  });
});

type Refusal = { status: number; headers: Record<string, string> } | undefined;

/** Answers what `refuse` says for a request, or forwards it to the gateway on `targetPort`. */
async function refusingProxy(targetPort: number, refuse: (method: string) => Refusal): Promise<Server> {
  const server = createServer((incoming, outgoing) => {
    const refusal = refuse(incoming.method!);
    if (refusal) {
      incoming.resume();
      outgoing.writeHead(refusal.status, { 'content-type': 'application/json', ...refusal.headers }).end('{"error":"Try again later"}');
      return;
    }
    const forward = httpRequest({ host: '127.0.0.1', port: targetPort, method: incoming.method, path: incoming.url, headers: incoming.headers }, (answer) => {
      outgoing.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(outgoing);
    });
    forward.on('error', (error) => outgoing.destroy(error));
    incoming.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
