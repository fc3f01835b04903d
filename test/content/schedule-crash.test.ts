import { describe, expect, it } from 'vitest';
import { kill9 } from '../support/worker-process.ts';
import { historyOnceRevised, useContentCrashWorld } from './support.ts';
import { eventually } from '../support/polling.ts';

// Issue 22: a publish date that passes while the worker is down (SIGKILLed) fires when a worker is
// back, and the entry's history says it was applied late.

describe('a schedule across a worker SIGKILL', { timeout: 300_000 }, () => {
  const crash = useContentCrashWorld();

  it('publishes when the next worker starts, with a revision saying it was late', async () => {
    const { cw } = crash;
    const first = await crash.spawnWorker();
    const entry = await cw.create({ title: 'Outlives the worker', slug: 'outlives' });
    const publishOn = new Date(Date.now() + 3000);
    const res = await cw.manage('PUT', `/content/${entry.id}/schedule`, { publishOn: publishOn.toISOString(), unpublishOn: null });
    expect(res.statusCode, res.body).toBe(200);
    await kill9(first);
    // The date passes with no worker at all.
    await new Promise((resolve) => setTimeout(resolve, 9000));
    expect((await cw.manage('GET', `/content/${entry.id}`)).json().status).toBe('scheduled');

    await crash.spawnWorker();
    const published = await eventually(
      async () => {
        const now = (await cw.manage('GET', `/content/${entry.id}`)).json();
        return now.status === 'published' && now;
      },
      'the date applied by the next worker',
      120_000,
      250,
    );
    expect(published).toMatchObject({ publishOn: null, version: 3 });
    const history = await historyOnceRevised(
      () => cw.manage('GET', `/content/${entry.id}/revisions`),
      (latest) => latest.version === 3,
      'the late publish in the history',
    );
    expect(history[0]).toMatchObject({ version: 3, status: 'published', note: expect.stringContaining(`due ${publishOn.toISOString()}, applied late`) });
    expect((await cw.pub('/content/outlives')).statusCode).toBe(200);
  });
});
