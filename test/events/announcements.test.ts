import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookWorld, call, startReceiver, siteDb } from './support.ts';
import type { World } from '../support/world.ts';
import { adminEndpoints } from '../../services/events/endpoint-ops.ts';
import { announceVersion } from '../../services/platform/version-announcement.ts';
import { createApiKey } from '../support/access.ts';
import { eventually } from '../support/polling.ts';

describe('events without a request behind them', () => {
  let world: World;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    world = await startWebhookWorld({ worker: true });
    receiver = await startReceiver();
    await call(world, adminEndpoints.create, { name: 'all', url: receiver.url, events: ['core.updated', 'settings.updated'] });
  });
  afterAll(async () => {
    await receiver?.close();
    await world?.close();
  });

  it('announces core.updated once per new version, from exactly one of several gateways', async () => {
    expect(await announceVersion(world.services, '1.0.0')).toBe(false); // first install: nothing to announce
    const racing = await Promise.all([announceVersion(world.services, '1.1.0'), announceVersion(world.services, '1.1.0')]);
    expect(racing.filter(Boolean)).toHaveLength(1);
    expect(await announceVersion(world.services, '1.1.0')).toBe(false);
    const { deliveries } = await siteDb(world);
    const rows = await eventually(async () => {
      const found = await deliveries.find({ event: 'core.updated' }).toArray();
      return found.length === 1 && found;
    }, 'condition');
    expect(rows).toHaveLength(1);
    const delivered = await eventually(async () => receiver.received.find((r) => r.body.includes('core.updated')), 'condition');
    expect(JSON.parse(delivered.body)).toMatchObject({ event: 'core.updated', data: { from: '1.0.0', to: '1.1.0' } });
  });

  it('emits settings.updated with the changed keys from PATCH /settings', async () => {
    const { key } = await createApiKey(world, { capabilities: ['settings:manage', 'settings:read'] });
    const response = await world.app.inject({
      method: 'PATCH',
      url: '/api/manage/v1/settings',
      headers: { authorization: `Bearer ${key}` },
      payload: { title: 'Renamed site' },
    });
    expect(response.statusCode).toBe(200);
    const delivered = await eventually(async () => receiver.received.find((r) => r.body.includes('settings.updated')), 'condition');
    expect(JSON.parse(delivered.body)).toMatchObject({ event: 'settings.updated', data: { changed: ['title'] } });
  });
});
