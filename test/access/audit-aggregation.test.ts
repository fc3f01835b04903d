import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { createApiKey, defaultSiteContext, setKeySettings } from '../support/access.ts';
import { accessCollections } from '../../services/access/model.ts';
import { bumpAccessVersion } from '../../services/access/site-settings-store.ts';

let world: World;
let adminKey: string;
beforeAll(async () => {
  world = await startWorld();
  adminKey = (await createApiKey(world, { capabilities: ['site:admin'] })).key;
});
afterAll(() => world?.close());

const call = (key: string, url: string, remoteAddress: string) =>
  world.app.inject({ method: 'GET', url: `/api/manage/v1${url}`, headers: { authorization: `Bearer ${key}` }, remoteAddress });

describe('audit of failed authentication', () => {
  it('folds a flood of failures into one row per key or IP and window, still counting every one, past the rate limit too', async () => {
    await setKeySettings(world, { defaultRateLimitPerMin: 10 });
    const ghost = `svk_${'g'.repeat(12)}${'Q'.repeat(43)}`;
    const revoked = await createApiKey(world, { capabilities: ['content:read'], name: 'to revoke' });
    const ctx = await defaultSiteContext(world);
    await accessCollections(ctx.db).apiKeys.updateOne({ _id: revoked.id }, { $set: { status: 'revoked', revokedAt: new Date() } });
    await bumpAccessVersion(ctx.db, ctx.site._id);
    const statuses: number[] = [];
    for (let i = 0; i < 25; i += 1) statuses.push((await call(ghost, '/audit', '10.9.9.9')).statusCode);
    for (let i = 0; i < 5; i += 1) await call(revoked.key, '/audit', '10.9.9.8');
    expect(statuses).toContain(401);
    expect(statuses).toContain(429);

    const rows = await accessCollections(ctx.db).audit.find({ action: 'auth.failed' }).toArray();
    const byIp = rows.filter((row) => row.ip === '10.9.9.9');
    expect(byIp).toHaveLength(1);
    expect(byIp[0]).toMatchObject({ keyId: null, reason: 'unknown', count: 25 });
    expect(byIp[0].lastAt!.getTime()).toBeGreaterThanOrEqual(byIp[0].at.getTime());
    const byKey = rows.filter((row) => row.keyId === revoked.id);
    expect(byKey).toHaveLength(1);
    expect(byKey[0]).toMatchObject({ reason: 'revoked', count: 5 });

    await setKeySettings(world, { defaultRateLimitPerMin: 100_000 });
    const listed = await call(adminKey, '/audit?action=auth.failed', '127.0.0.1');
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json().data).toEqual(expect.arrayContaining([expect.objectContaining({ ip: '10.9.9.9', count: 25, reason: 'unknown' })]));
  });
});
