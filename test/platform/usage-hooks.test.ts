import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Site, Workspace } from '../../services/core/tenants.ts';
import { siteUsage, workspaceUsage } from '../../services/platform/usage.ts';
import { platformCollections } from '../../services/tenancy/platform-db.ts';
import { reconcileEntryCounts } from '../../services/content/entry-counts.ts';
import { startWorld, type World } from '../support/world.ts';

/**
 * Usage figures come from each feature's `usage` hook (services/core/feature.ts), the platform
 * counting only sites and its quota counters: each figure has exactly one source and equals what the
 * feature stores.
 */
describe('usage through Feature hooks', () => {
  let world: World;
  let workspace: Workspace;
  const site: Site = { _id: 'usage-probe', workspaceId: '', name: 'Probe', domains: [], quotas: {}, createdAt: new Date(), updatedAt: new Date() };

  beforeAll(async () => {
    world = await startWorld();
    workspace = (await platformCollections(world.services).workspaces.findOne({ _id: world.defaultWorkspace.id }))!;
    site.workspaceId = workspace._id;
    // A site of its own in the default workspace database, so the figures are known exactly.
    const db = world.services.workspaceDb(workspace);
    const siteId = site._id;
    await db.collection('users').insertMany([
      { siteId, email: 'a@probe.test' },
      { siteId, email: 'b@probe.test' },
    ] as never[]);
    await db.collection('api_keys').insertMany([
      { siteId, lookup: 'probe-1', status: 'active' },
      { siteId, lookup: 'probe-2', status: 'revoked' },
    ] as never[]);
    await db.collection('content_entries').insertMany([
      { siteId, locale: 'en', slug: 'one', trashedAt: null },
      { siteId, locale: 'en', slug: 'two', trashedAt: null },
      { siteId, locale: 'en', slug: 'gone', trashedAt: new Date() },
    ] as never[]);
    await db.collection('webhook_endpoints').insertOne({ siteId } as never);
    await db.collection('site_state').insertOne({ _id: `media:site:${siteId}`, bytes: 1234 } as never);
  });
  afterAll(() => world?.close());

  it('each figure comes from exactly one feature', async () => {
    const names: string[] = [];
    for (const feature of world.services.features) names.push(...Object.keys((await feature.usage?.(world.services, workspace, site._id)) ?? {}));
    expect(names.sort()).toEqual(['apiKeys', 'entries', 'mediaBytes', 'users', 'webhookEndpoints']);
  });

  it("a site's figures are what its features store; the workspace's include them", async () => {
    const used = Object.fromEntries(Object.entries((await siteUsage(world.services, workspace, site)).quotas).map(([name, q]) => [name, q.used]));
    expect(used).toMatchObject({ users: 2, apiKeys: 1, entries: 2, mediaBytes: 1234, mediaFileSize: null, webhookEndpoints: 1 });
    const whole = (await workspaceUsage(world.services, workspace)).quotas;
    for (const name of ['users', 'apiKeys', 'entries', 'webhookEndpoints'] as const) expect(whole[name].used).toBeGreaterThanOrEqual(used[name] as number);
    expect(whole.sites.used).toBe(await platformCollections(world.services).sites.countDocuments({ workspaceId: workspace._id }));
  });

  it('the entries figure is the kept counter: a row it did not count is found by one recount (the collection grew), then it holds', async () => {
    const db = world.services.workspaceDb(workspace);
    const entriesUsed = async () => (await siteUsage(world.services, workspace, site)).quotas.entries.used;
    expect(await entriesUsed()).toBe(2);
    // A row written around the write path moves no counter; the collection's size says so (content/entry-counts.ts).
    await db.collection('content_entries').insertOne({ siteId: site._id, locale: 'en', slug: 'around', trashedAt: null } as never);
    expect(await entriesUsed()).toBe(3);
    await reconcileEntryCounts(db);
    expect(await entriesUsed()).toBe(3);
  });
});
