import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContentWorld, type ContentWorld } from './support.ts';
import { scheduleWorkflowId } from '../../services/content/schedule.ts';
import { eventually } from '../support/polling.ts';

let cw: ContentWorld;
beforeAll(async () => {
  cw = await startContentWorld({ worker: true });
});
afterAll(async () => cw?.close());

const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();

describe('scheduled publishing', () => {
  it('publishes at publishOn and returns to draft at unpublishOn (durable timers in one workflow per entry)', async () => {
    const entry = await cw.create({ title: 'Timed', slug: 'timed' });
    const res = await cw.manage('PUT', `/content/${entry.id}/schedule`, { publishOn: inSeconds(2), unpublishOn: null, expectedVersion: 1 });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'scheduled', version: 2, unpublishOn: null });
    expect(res.json().publishOn).toBeTruthy();
    const handle = cw.world.services.temporal.client.workflow.getHandle(scheduleWorkflowId(cw.world.defaultWorkspace.id, entry.id));
    expect((await handle.describe()).status.name).toBe('RUNNING');
    expect((await cw.pub('/content/timed')).statusCode).toBe(404);

    const published = await eventually(async () => {
      const entryNow = await cw.manage('GET', `/content/${entry.id}`).then((r) => r.json());
      return entryNow.status === 'published' && entryNow;
    }, 'the entry published by its schedule');
    expect(published).toMatchObject({ status: 'published', publishOn: null });
    expect((await cw.pub('/content/timed')).statusCode).toBe(200);

    // Unpublishing at a date: the entry returns to draft and leaves the public site.
    await cw.manage('PUT', `/content/${entry.id}/schedule`, { publishOn: null, unpublishOn: inSeconds(2) });
    expect((await cw.manage('GET', `/content/${entry.id}`)).json().status).toBe('published');
    const back = await eventually(async () => {
      const entryNow = await cw.manage('GET', `/content/${entry.id}`).then((r) => r.json());
      return entryNow.status === 'draft' && entryNow;
    }, 'the entry back to draft at unpublishOn');
    expect(back).toMatchObject({ status: 'draft', publishOn: null, unpublishOn: null, publishedAt: null });
    expect((await cw.pub('/content/timed')).statusCode).toBe(404);
    // The activity that wrote the status emits after the write: the event may follow the status by a moment.
    await expect
      .poll(() => cw.events.filter((e) => e.data.id === entry.id).map((e) => e.event))
      .toEqual(expect.arrayContaining(['content.published', 'content.unpublished']));
  });

  it('a new schedule replaces the old one; null cancels it', async () => {
    const entry = await cw.create({ title: 'Replaced' });
    await cw.manage('PUT', `/content/${entry.id}/schedule`, { publishOn: inSeconds(3600), unpublishOn: null });
    const handle = cw.world.services.temporal.client.workflow.getHandle(scheduleWorkflowId(cw.world.defaultWorkspace.id, entry.id));
    const firstRun = (await handle.describe()).runId;
    await cw.manage('PUT', `/content/${entry.id}/schedule`, { publishOn: inSeconds(7200), unpublishOn: null });
    const second = await handle.describe();
    expect(second.runId).not.toBe(firstRun);
    expect(second.status.name).toBe('RUNNING');

    const cancelled = await cw.manage('PUT', `/content/${entry.id}/schedule`, { publishOn: null, unpublishOn: null });
    expect(cancelled.json()).toMatchObject({ status: 'draft', publishOn: null, unpublishOn: null });
    expect((await handle.describe()).status.name).toBe('TERMINATED');
  });

  it('a manual unpublish cancels a pending publish date; a manual publish keeps the unpublish date', async () => {
    const entry = await cw.create({ title: 'Manual' });
    const handle = cw.world.services.temporal.client.workflow.getHandle(scheduleWorkflowId(cw.world.defaultWorkspace.id, entry.id));
    await cw.manage('PUT', `/content/${entry.id}/schedule`, { publishOn: inSeconds(3600), unpublishOn: inSeconds(7200) });
    const published = (await cw.manage('POST', `/content/${entry.id}/publish`)).json();
    expect(published).toMatchObject({ status: 'published', publishOn: null });
    expect(published.unpublishOn).toBeTruthy();
    expect((await handle.describe()).status.name).toBe('RUNNING');
    const unpublished = (await cw.manage('POST', `/content/${entry.id}/unpublish`)).json();
    expect(unpublished).toMatchObject({ status: 'draft', publishOn: null, unpublishOn: null });
    expect((await handle.describe()).status.name).toBe('TERMINATED');
  });

  it('refuses an unpublish date before the publish date, a bad date, or a stale version, changing nothing', async () => {
    const entry = await cw.create({ title: 'Bad dates' });
    const cases = [{ publishOn: inSeconds(100), unpublishOn: inSeconds(50) }, { publishOn: 'tomorrow', unpublishOn: null }, { publishOn: inSeconds(100) }];
    for (const body of cases) expect((await cw.manage('PUT', `/content/${entry.id}/schedule`, body)).statusCode, JSON.stringify(body)).toBe(400);
    expect((await cw.manage('PUT', `/content/${entry.id}/schedule`, { publishOn: inSeconds(100), unpublishOn: null, expectedVersion: 9 })).statusCode).toBe(
      409,
    );
    const reader = await cw.keyWith(['content:read', 'content:update']);
    expect((await cw.manage('PUT', `/content/${entry.id}/schedule`, { publishOn: inSeconds(100), unpublishOn: null }, reader)).statusCode).toBe(403);
    expect((await cw.manage('GET', `/content/${entry.id}`)).json()).toMatchObject({ version: 1, status: 'draft', publishOn: null });
  });
});
