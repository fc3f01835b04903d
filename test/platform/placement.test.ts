import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MongoClient } from 'mongodb';
import { parseClusters } from '../../services/core/clusters.ts';
import { loadConfig, ConfigError } from '../../services/core/config.ts';
import { startWorld, type World } from '../support/world.ts';
import { newAdmin, operatorCaller, workspaceRow } from './support.ts';
import type { OperatorCall } from './backup-support.ts';
import { dropSecond, ensureSecondCluster, prefixedDatabases, secondClient, TWO_CLUSTERS } from './placement-support.ts';
import { platformCollections } from '../../services/tenancy/platform-db.ts';

describe('MONGODB_CLUSTERS', () => {
  it('takes label=uri entries or a JSON object; the label before its first - is the region', () => {
    expect(parseClusters(undefined)).toEqual([]);
    expect(parseClusters('eu-1=mongodb://a:1/?w=majority; us=mongodb+srv://b.example.test')).toEqual([
      { label: 'eu-1', region: 'eu', uri: 'mongodb://a:1/?w=majority' },
      { label: 'us', region: 'us', uri: 'mongodb+srv://b.example.test' },
    ]);
    expect(parseClusters('{"eu-2":"mongodb://c:2"}')).toEqual([{ label: 'eu-2', region: 'eu', uri: 'mongodb://c:2' }]);
  });

  it('refuses a bad entry at start, naming it', () => {
    const base = { MONGODB_URI: 'mongodb://127.0.0.1:27117', TEMPORAL_ADDRESS: '127.0.0.1:7233', SECRET_KEY: 'x'.repeat(64) };
    for (const [value, message] of [
      ['eu', 'is not label=uri'],
      ['default=mongodb://a', 'MONGODB_URI'],
      ['EU=mongodb://a', 'lower-case'],
      ['eu=http://a', 'mongodb://'],
      ['eu=mongodb://a eu=mongodb://b', 'named twice'],
      ['{"eu":', 'JSON'],
    ]) {
      expect(() => loadConfig({ ...base, MONGODB_CLUSTERS: value }), value).toThrow(ConfigError);
      expect(() => loadConfig({ ...base, MONGODB_CLUSTERS: value }), value).toThrow(message);
    }
  });
});

describe('placement over two clusters (a second local engine)', () => {
  let world: World;
  let call: OperatorCall;
  let second: MongoClient;
  beforeAll(async () => {
    await ensureSecondCluster();
    world = await startWorld({ worker: true, env: TWO_CLUSTERS });
    call = await operatorCaller(world);
    second = secondClient();
  }, 180_000);
  afterAll(async () => {
    if (world) await dropSecond(world);
    await second?.close();
    await world?.close();
  });

  const create = (name: string, extra: Record<string, unknown> = {}) =>
    call('POST', '/tenants', { name, domains: [`${name}.placement.example.test`], admin: newAdmin, ...extra });

  it('lists the clusters (no URI) with their workspaces; places by the rule; shows the cluster', async () => {
    const listed = await call('GET', '/clusters');
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toEqual({
      clusters: [
        { label: 'default', region: 'default', workspaces: 1 },
        { label: 'second', region: 'second', workspaces: 0 },
      ],
    });
    expect(listed.body).not.toContain('mongodb://');

    // The emptiest cluster: `second` (the default one holds the platform's own workspace).
    const first = await create('first');
    expect(first.statusCode, first.body).toBe(202);
    expect(first.json().tenant.cluster).toBe('second');
    const firstId = first.json().tenant.id;
    const row = (await workspaceRow(world, firstId))!;
    expect(row.cluster).toBe('second');
    // Its database is on the second engine, not on the default one.
    expect(await prefixedDatabases(second, world)).toContain(row.dbName);
    expect((await world.services.mongo.db('admin').admin().listDatabases({ nameOnly: true })).databases.map((d) => d.name)).not.toContain(row.dbName);
    expect((await call('GET', `/tenants/${firstId}`)).json().tenant.cluster).toBe('second');

    // A tie goes to the first listed (default); a cluster or a region asked for wins.
    expect((await create('tie')).json().tenant.cluster).toBe('default');
    expect((await create('asked', { cluster: 'second' })).json().tenant.cluster).toBe('second');
    expect((await create('region', { region: 'default' })).json().tenant.cluster).toBe('default');
    const counted = (await call('GET', '/clusters')).json().clusters;
    expect(counted.map((c: { workspaces: number }) => c.workspaces)).toEqual([3, 2]);
  }, 120_000);

  it('refuses an unknown cluster or region with a 400, creating nothing', async () => {
    const before = await platformCollections(world.services).workspaces.countDocuments();
    for (const [extra, error] of [
      [{ cluster: 'mars' }, 'Unknown cluster: mars'],
      [{ region: 'mars' }, 'No cluster in region: mars'],
      [{ cluster: 'Bad Label' }, 'cluster'],
    ] as const) {
      const res = await create('refused', extra);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toContain(error);
    }
    expect(await platformCollections(world.services).workspaces.countDocuments()).toBe(before);
    expect(await platformCollections(world.services).domains.findOne({ _id: 'refused.placement.example.test' })).toBeNull();
  });

  it('refuses a move to an unknown cluster (400), to where it is or of a missing workspace (409/404), changing nothing', async () => {
    const { tenant } = (await create('stay', { cluster: 'second' })).json();
    expect((await call('POST', `/tenants/${tenant.id}/move`, { cluster: 'mars' })).statusCode).toBe(400);
    const same = await call('POST', `/tenants/${tenant.id}/move`, { cluster: 'second' });
    expect(same.statusCode).toBe(409);
    expect(same.json()).toEqual({ error: 'Workspace is already on second' });
    expect((await call('POST', `/tenants/nope/move`, { cluster: 'default' })).statusCode).toBe(404);
    expect((await call('GET', `/tenants/${tenant.id}/moves/nope`)).statusCode).toBe(404);
    const row = (await workspaceRow(world, tenant.id))!;
    expect(row.cluster).toBe('second');
    expect(row.move).toBeUndefined();
  }, 60_000);
});
