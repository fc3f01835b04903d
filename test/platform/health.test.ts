import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { createApiKey } from '../support/access.ts';
import { eventually } from '../support/polling.ts';

describe('health with a worker polling the task queue', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ worker: true });
  });
  afterAll(() => world?.close());

  it('is ok once the worker polls for workflow and activity tasks', async () => {
    const { key } = await createApiKey(world, { capabilities: ['content:read'] });
    const health = async () => (await world.app.inject({ url: '/api/manage/v1/health', headers: { authorization: `Bearer ${key}` } })).json();
    const body = await eventually(
      async () => {
        const answer = await health();
        return answer.status === 'ok' && answer;
      },
      'health ok',
      10_000,
      250,
    );
    expect(body.status).toBe('ok');
    expect(body.checks.worker.status).toBe('ok');
    expect(body.checks.worker.pollers.workflow).toBeGreaterThan(0);
    expect(body.checks.worker.pollers.activity).toBeGreaterThan(0);
  });
});
