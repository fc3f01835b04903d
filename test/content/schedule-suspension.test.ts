import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { eventually } from '../support/polling.ts';
import { historyOnceRevised } from './support.ts';
import { caller, createTenant, keyOnHost, operatorCaller } from '../platform/support.ts';

// Issue 22: a publish date that passes while the workspace is suspended is not lost: it fires at
// reactivation, and the entry's history says it was applied late.

let world: World;
beforeAll(async () => {
  world = await startWorld({ worker: true, env: { LIFECYCLE_WAIT_MS: '60000' } });
});
afterAll(() => world?.close());

describe('a schedule across a suspension', () => {
  it('publishes at reactivation a date that passed while suspended, and says so in a revision', async () => {
    const operator = await operatorCaller(world);
    const host = 'asleep.example.test';
    const { tenantId } = await createTenant(operator, 'Asleep', host);
    const key = await keyOnHost(world, host, ['content:read', 'content:create', 'content:update', 'content:publish', 'content:revisions:read']);
    const call = caller(world, () => key);
    const entry = (await call('POST', '/content', { title: 'Wakes up', slug: 'wakes-up' }, key, host)).json();
    const publishOn = new Date(Date.now() + 2000);
    const scheduled = await call('PUT', `/content/${entry.id}/schedule`, { publishOn: publishOn.toISOString(), unpublishOn: null }, key, host);
    expect(scheduled.statusCode, scheduled.body).toBe(200);

    expect((await operator('POST', `/tenants/${tenantId}/suspend`)).statusCode).toBe(202);
    // Well past the date (and the first tries of the activity) while suspended.
    await new Promise((resolve) => setTimeout(resolve, 9000));
    expect((await operator('POST', `/tenants/${tenantId}/reactivate`)).statusCode).toBe(202);
    const stillWaiting = (await call('GET', `/content/${entry.id}`, undefined, key, host)).json();
    expect(stillWaiting.status).toBe('scheduled');

    const published = await eventually(
      async () => {
        const now = (await call('GET', `/content/${entry.id}`, undefined, key, host)).json();
        return now.status === 'published' && now;
      },
      'the late publish date applied after reactivation',
      60_000,
      250,
    );
    expect(published).toMatchObject({ status: 'published', publishOn: null });
    const history = await historyOnceRevised(
      () => call('GET', `/content/${entry.id}/revisions`, undefined, key, host),
      (latest) => latest.status === 'published',
      'the late publish in the history',
    );
    expect(history[0]).toMatchObject({ status: 'published', note: expect.stringContaining(`due ${publishOn.toISOString()}, applied late`) });
    const publicRead = await world.app.inject({ url: '/api/v1/content/wakes-up', headers: { host } });
    expect(publicRead.statusCode).toBe(200);
  });
});
