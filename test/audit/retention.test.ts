import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { createApiKey, defaultSiteContext } from '../support/access.ts';
import { accessCollections, ACCESS_COLLECTIONS } from '../../services/access/model.ts';
import type { AuditDoc } from '../../services/audit/model.ts';
import { runRetentionPass } from '../../services/platform/retention.ts';
import { newId } from '../../services/core/ids.ts';

const DAY = 24 * 60 * 60_000;
let world: World;
let key: string;
beforeAll(async () => {
  world = await startWorld();
  key = (await createApiKey(world, { capabilities: ['site:admin'] })).key;
});
afterAll(() => world?.close());

const call = (method: string, url: string, payload?: unknown) =>
  world.app.inject({ method: method as never, url: `/api/manage/v1${url}`, headers: { authorization: `Bearer ${key}` }, payload: payload as never });

function row(siteId: string, name: string, ageDays: number, extra: Partial<AuditDoc> = {}): AuditDoc {
  const at = new Date(Date.now() - ageDays * DAY);
  return {
    _id: newId(at.getTime()),
    siteId,
    at,
    action: name,
    keyId: null,
    userId: null,
    ip: '127.0.0.1',
    reason: null,
    target: { kind: 'test', id: name },
    ...extra,
  };
}

describe('audit retention', () => {
  it('the pass drops only what is due: expired rows, change rows past the workspace retention, platform rows past a year', async () => {
    const ctx = await defaultSiteContext(world);
    const log = accessCollections(ctx.db).audit;
    const platform = world.services.platformDb.collection<AuditDoc>(ACCESS_COLLECTIONS.audit);
    const siteId = ctx.site._id;
    const future = (days: number) => new Date(Date.now() + days * DAY);
    await log.insertMany([
      row(siteId, 'old-change', 100),
      row(siteId, 'recent-change', 10, { expiresAt: future(80) }),
      row(siteId, 'expired-change', 5, { expiresAt: new Date(Date.now() - DAY) }),
      // A failure row keeps its own window's retention, whatever the workspace's.
      row(siteId, 'failure', 20, { agg: 'w:x', expiresAt: future(10) }),
      // Another site's row is that site's business.
      row('another-site', 'foreign-old', 400),
    ]);
    await platform.insertMany([row(siteId, 'platform-old', 400), row(siteId, 'platform-recent', 100, { expiresAt: future(265) })]);

    const names = async () => (await log.find({ 'target.kind': 'test' }).toArray()).map((r) => r.action).sort();
    const platformNames = async () => (await platform.find({ 'target.kind': 'test' }).toArray()).map((r) => r.action).sort();
    await runRetentionPass(world.services);
    expect(await names()).toEqual(['failure', 'foreign-old', 'recent-change']);
    expect(await platformNames()).toEqual(['platform-recent']);

    // A shorter retention reaches older rows at the next pass; the failure row still keeps its own.
    expect((await call('PUT', '/audit/retention', { days: 7 })).statusCode).toBe(200);
    await runRetentionPass(world.services);
    expect(await names()).toEqual(['failure', 'foreign-old']);

    // Rows written from now on carry the workspace's retention (TTL on MongoDB).
    await world.services.audit.settled();
    const setting = await log.findOne({ operation: 'audit.retention.put' });
    expect(setting!.expiresAt!.getTime() - setting!.at.getTime()).toBe(90 * DAY);
    await call('PUT', '/audit/retention', { days: 30 });
    await world.services.audit.settled();
    const next = (await log.find({ operation: 'audit.retention.put' }).sort({ _id: -1 }).limit(1).toArray())[0];
    expect(next.expiresAt!.getTime() - next.at.getTime()).toBe(7 * DAY);
  });

  it('refuses a retention outside 1–3650 days (400) and keeps the setting', async () => {
    const before = (await call('GET', '/audit/retention')).json().days;
    for (const days of [0, 3651, 1.5, '30']) expect((await call('PUT', '/audit/retention', { days })).statusCode, String(days)).toBe(400);
    expect((await call('PUT', '/audit/retention', { days: 30, extra: 1 })).statusCode).toBe(400);
    expect((await call('GET', '/audit/retention')).json().days).toBe(before);
  });
});
