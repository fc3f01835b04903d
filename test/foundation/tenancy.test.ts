import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, startWorld, type World } from '../support/world.ts';
import { probeFeature } from '../support/probe-feature.ts';
import { features } from '../../services/features.ts';

describe('multi-tenant routing', () => {
  let world: World;
  let other: Awaited<ReturnType<typeof createWorkspace>>;

  beforeAll(async () => {
    world = await startWorld({ features: [...features, probeFeature] });
    other = await createWorkspace(world.services, {
      name: 'Second',
      domains: ['b.example.test', 'www.b.example.test'],
      admin: { email: 'owner@b.example.test', password: 'correct horse battery' },
    });
  });
  afterAll(() => world?.close());

  it('keeps a document written through one host invisible through the other, in another database', async () => {
    const created = await world.app.inject({
      method: 'POST',
      url: '/api/v1/test-notes',
      headers: { host: 'localhost:3000' },
      payload: { text: 'only in the default workspace' },
    });
    expect(created.statusCode).toBe(201);
    const { id } = created.json();

    const fromDefault = await world.app.inject({ url: '/api/v1/test-notes', headers: { host: '127.0.0.1' } });
    expect(fromDefault.json().items.map((n: { id: string }) => n.id)).toContain(id);

    const fromOther = await world.app.inject({ url: '/api/v1/test-notes', headers: { host: 'B.Example.Test:8080' } });
    expect(fromOther.statusCode).toBe(200);
    expect(fromOther.json().items).toEqual([]);

    const defaultDbName = world.defaultWorkspace.dbName;
    expect(other.workspace.dbName).not.toBe(defaultDbName);
    const inDefault = await world.services.mongo.db(defaultDbName).collection('test_notes').countDocuments({ _id: id });
    const inOther = await world.services.mongo.db(other.workspace.dbName).collection('test_notes').countDocuments({});
    expect(inDefault).toBe(1);
    expect(inOther).toBe(0);
  });

  it('writes through the second host land in the second database only', async () => {
    const created = await world.app.inject({
      method: 'POST',
      url: '/api/v1/test-notes',
      headers: { host: 'www.b.example.test' },
      payload: { text: 'second' },
    });
    expect(created.statusCode).toBe(201);
    const row = await world.services.mongo.db(other.workspace.dbName).collection('test_notes').findOne({ text: 'second' });
    expect(row?.siteId).toBe(other.site._id);
  });

  it('answers 404 with { error } for an unknown host and writes nothing', async () => {
    const before = await world.services.mongo.db(world.defaultWorkspace.dbName).collection('test_notes').countDocuments({});
    const response = await world.app.inject({
      method: 'POST',
      url: '/api/v1/test-notes',
      headers: { host: 'nobody.example.test' },
      payload: { text: 'lost' },
    });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ error: 'Unknown site' });
    const after = await world.services.mongo.db(world.defaultWorkspace.dbName).collection('test_notes').countDocuments({});
    expect(after).toBe(before);
  });

  it('refuses a domain that already belongs to another site', async () => {
    await expect(
      createWorkspace(world.services, {
        name: 'Thief',
        domains: ['b.example.test'],
        admin: { email: 'thief@example.test', password: 'correct horse battery' },
      }),
    ).rejects.toThrow(/Domain already in use/);
  });
});
