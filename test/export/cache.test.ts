import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPluginWorld, type PluginWorld } from '../plugins/support.ts';

interface CacheRow {
  name: string;
  reach: string;
  entries: number | null;
  details: Record<string, unknown>;
}

describe('cache routes', () => {
  let pw: PluginWorld;
  let manager: string;
  let reader: string;
  let probeCleared = 0;

  beforeAll(async () => {
    pw = await startPluginWorld();
    // The world's administrator is a platform operator: these keys see the process-wide caches too.
    manager = await pw.keyWith(['settings:read', 'settings:manage', 'content:read', 'platform:manage']);
    reader = await pw.keyWith(['settings:read', 'platform:read']);
    // A module registering its own cache, as other features would.
    pw.world.services.caches.register({
      name: 'probe',
      description: 'test cache',
      reach: 'process',
      stats: () => ({ entries: 3, details: { hits: 7 } }),
      clear: () => {
        probeCleared += 1;
      },
    });
  }, 300_000);
  afterAll(() => pw?.close(), 120_000);

  const stats = async (): Promise<CacheRow[]> => {
    const res = await pw.manage('GET', '/cache/stats', reader);
    expect(res.statusCode).toBe(200);
    return res.json().caches;
  };
  const generation = async () => (await stats()).find((c) => c.name === 'public-content')!.details.generation as number;

  it('reports the registered caches', async () => {
    // Warm the public read path so the resolver and the public cache hold something.
    expect((await pw.world.app.inject({ url: '/api/v1/content' })).statusCode).toBe(200);
    const caches = await stats();
    expect(caches.map((c) => c.name)).toEqual(['manage-reads', 'plugins-active', 'probe', 'public-content', 'site-resolver']);
    expect(caches.find((c) => c.name === 'probe')).toMatchObject({ reach: 'process', entries: 3, details: { hits: 7 } });
    expect(caches.find((c) => c.name === 'public-content')).toMatchObject({ reach: 'site' });
  });

  it('clears every cache: the public generation moves so every gateway drops its responses', async () => {
    const before = await generation();
    const res = await pw.manage('POST', '/cache/clear', manager);
    expect(res.statusCode).toBe(200);
    expect(res.json().cleared).toEqual(['manage-reads', 'plugins-active', 'probe', 'public-content', 'site-resolver']);
    expect(probeCleared).toBe(1);
    expect(await generation()).toBe(before + 1);
  });

  it('clears only the caches named', async () => {
    const before = await generation();
    const res = await pw.manage('POST', '/cache/clear', manager, { caches: ['probe'] });
    expect(res.statusCode).toBe(200);
    expect(res.json().cleared).toEqual(['probe']);
    expect(probeCleared).toBe(2);
    expect(await generation()).toBe(before);
  });

  it('rejects an unknown cache name, a bad body and a key without settings:manage, clearing nothing', async () => {
    const before = await generation();
    const unknown = await pw.manage('POST', '/cache/clear', manager, { caches: ['probe', 'nope'] });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error).toMatch(/nope/);
    const bad = await pw.manage('POST', '/cache/clear', manager, { caches: 'probe' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatch(/caches/);
    const forbidden = await pw.manage('POST', '/cache/clear', reader);
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json().error).toBeTruthy();
    const noStats = await pw.manage('GET', '/cache/stats', await pw.keyWith(['content:read']));
    expect(noStats.statusCode).toBe(403);
    expect(probeCleared).toBe(2);
    expect(await generation()).toBe(before);
  });

  it("a workspace key (no platform rights) sees and clears only its site's caches", async () => {
    const siteReader = await pw.keyWith(['settings:read']);
    const siteManager = await pw.keyWith(['settings:read', 'settings:manage']);
    const seen = (await pw.manage('GET', '/cache/stats', siteReader)).json().caches.map((c: CacheRow) => c.name);
    expect(seen).toEqual(['public-content']);
    const before = await generation();
    const cleared = await pw.manage('POST', '/cache/clear', siteManager);
    expect(cleared.statusCode).toBe(200);
    expect(cleared.json().cleared).toEqual(['public-content']);
    expect(probeCleared).toBe(2);
    expect(await generation()).toBe(before + 1);
    for (const caches of [['probe'], ['site-resolver'], ['public-content', 'plugins-active']]) {
      const refused = await pw.manage('POST', '/cache/clear', siteManager, { caches });
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toEqual({ error: 'Forbidden' });
    }
    expect(probeCleared).toBe(2);
    expect(await generation()).toBe(before + 1);
  });
});
