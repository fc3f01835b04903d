import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPluginWorld, type PluginWorld } from '../plugins/support.ts';
import { staticExportWorkflowId } from '../../workflows/contracts/static-export.ts';
import { checkHistory } from '../support/histories.ts';
import { allDocs, liveFiles, runToEnd, stagedDocs } from './support.ts';
import { eventually } from '../support/polling.ts';

// Generous timeouts: a run is several activities on a shared dev server that other suites load too.
describe('static export runs: progress, cancel, queue, history', { timeout: 240_000 }, () => {
  let pw: PluginWorld;
  let key: string;
  let reader: string;
  const ids: Record<string, string> = {};

  const status = async () => (await pw.manage('GET', '/static-export', reader)).json();
  const entry = async (title: string, publish = true) => {
    const created = await pw.manage('POST', '/content', key, { title, blocks: { version: 1, blocks: [{ type: 'paragraph', text: `Body of ${title} <b>` }] } });
    expect(created.statusCode).toBe(201);
    const { id } = created.json();
    if (publish) expect((await pw.manage('POST', `/content/${id}/publish`, key)).statusCode).toBe(200);
    return id as string;
  };
  const tuning = (batchSize: number, batchPauseMs: number) => Object.assign(pw.world.services.exportTuning, { batchSize, batchPauseMs });

  beforeAll(async () => {
    pw = await startPluginWorld({ worker: true });
    tuning(2, 1500);
    key = await pw.keyWith(['content:read', 'content:create', 'content:update', 'content:publish', 'content:delete', 'settings:read', 'settings:manage']);
    reader = await pw.keyWith(['settings:read']);
    for (const title of ['Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo', 'Foxtrot']) ids[title] = await entry(title);
    ids.Draft = await entry('Draft only', false);
  }, 300_000);
  afterAll(() => pw?.close(), 120_000);

  it('starts idle with no output and nothing to download', async () => {
    const s = await status();
    expect(s).toMatchObject({
      status: 'idle',
      progress: null,
      queued: [],
      lastRun: null,
      lastSuccessAt: null,
      lastError: null,
      output: { files: 0, bytes: 0, version: null },
    });
    const download = await pw.manage('GET', '/static-export/download', reader);
    expect(download.statusCode).toBe(404);
    expect(download.json().error).toBeTruthy();
    const cancel = await pw.manage('POST', '/static-export/cancel', key, {});
    expect(cancel.statusCode).toBe(409);
    expect((await pw.manage('GET', '/static-export/runs', reader)).json().data).toEqual([]);
  });

  it('a full run shows phase, pages done and total, rate and time left, then its summary', async () => {
    const res = await pw.manage('POST', '/static-export/run', key, { mode: 'full' });
    expect(res.statusCode).toBe(202);
    const { requestId } = res.json();
    const live = await eventually(
      async () => {
        const s = await status();
        return s.status === 'running' && s.progress?.phase === 'rendering' && s.progress.done >= 2 ? s : undefined;
      },
      'progress',
      150_000,
    );
    expect(live.progress).toMatchObject({ mode: 'full', total: 6 });
    expect(live.progress.done).toBeLessThan(6);
    expect(live.progress.rate).toBeGreaterThan(0);
    expect(live.progress.etaSeconds).toBeGreaterThanOrEqual(0);
    expect(live.progress.startedAt).toBeTruthy();
    const done = await eventually(
      async () => {
        const s = await status();
        return s.lastRun?.requestIds.includes(requestId) && s.status === 'idle' ? s : undefined;
      },
      'run end',
      150_000,
    );
    expect(done.lastRun).toMatchObject({ mode: 'full', status: 'succeeded', rendered: 6, error: null });
    expect(done.lastRun.durationMs).toBeGreaterThan(0);
    expect(done.output.files).toBeGreaterThan(12);
    expect(done.output.bytes).toBeGreaterThan(0);
    expect(done.output.version).toBeTruthy();
    const runs = (await pw.manage('GET', '/static-export/runs', reader)).json().data;
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ runId: done.lastRun.runId, status: 'succeeded' });
  });

  it('cancel mid-run: the run stops, its files go, the previous export stays served and downloadable', async () => {
    const ctx = await pw.site();
    const before = await liveFiles(ctx);
    const beforeStatus = await status();
    const archive = await pw.manage('GET', '/static-export/download?format=tar', reader);
    expect(archive.statusCode).toBe(200);
    expect((await pw.manage('PATCH', `/content/${ids.Alpha}`, key, { title: 'Alpha changed' })).statusCode).toBe(200);
    expect((await pw.manage('POST', `/content/${ids.Alpha}/publish`, key)).statusCode).toBe(200);

    tuning(1, 2500);
    const { requestId } = (await pw.manage('POST', '/static-export/run', key, { mode: 'full' })).json();
    await eventually(
      async () => {
        const s = await status();
        return s.progress?.phase === 'rendering' && s.progress.done >= 1 ? s : undefined;
      },
      'run under way',
      150_000,
    );
    // The run has staged files by now; none of them is served.
    expect(await stagedDocs(ctx)).toBeGreaterThan(0);
    const served = await pw.world.app.inject({ method: 'GET', url: '/static-preview/en/post/alpha/' });
    expect(served.body).toContain('<h1>Alpha</h1>');
    const cancel = await pw.manage('POST', '/static-export/cancel', key, {});
    expect(cancel.statusCode).toBe(202);
    expect(cancel.json()).toEqual({ cancelling: true });
    const done = await eventually(
      async () => {
        const s = await status();
        return s.lastRun?.requestIds.includes(requestId) && s.status === 'idle' ? s : undefined;
      },
      'cancelled run',
      150_000,
    );
    expect(done.lastRun).toMatchObject({ status: 'cancelled', error: null });
    expect(done.lastRun.rendered).toBeLessThan(6);
    expect(done.output).toEqual(beforeStatus.output);
    expect(done.lastSuccessAt).toBe(beforeStatus.lastSuccessAt);
    expect(await liveFiles(ctx)).toEqual(before);
    expect(await stagedDocs(ctx)).toBe(0);
    const again = await pw.manage('GET', '/static-export/download?format=tar', reader);
    expect(again.statusCode).toBe(200);
    expect(again.headers.etag).toBe(archive.headers.etag);
    expect(again.rawPayload.equals(archive.rawPayload)).toBe(true);
    expect((await pw.world.app.inject({ method: 'GET', url: '/static-preview/en/post/alpha/' })).body).toContain('<h1>Alpha</h1>');
    const runs = (await pw.manage('GET', '/static-export/runs', reader)).json().data;
    expect(runs.map((r: { status: string }) => r.status)).toEqual(['cancelled', 'succeeded']);
    const handle = pw.world.services.temporal.client.workflow.getHandle(staticExportWorkflowId({ workspaceId: ctx.workspace._id, siteId: ctx.site._id }));
    await eventually(async () => (await handle.describe()).status.name === 'COMPLETED', 'actor end', 150_000);
    await checkHistory(handle, 'export-cancelled');
  });

  it('serialises runs: requests made during a run queue behind it and are merged', async () => {
    tuning(1, 3000);
    const first = (await pw.manage('POST', '/static-export/run', key, { mode: 'full' })).json();
    await eventually(async () => ((await status()).status === 'running' ? true : undefined), 'first run', 150_000);
    const second = (await pw.manage('POST', '/static-export/run', key, { mode: 'incremental' })).json();
    const third = (await pw.manage('POST', '/static-export/run', key, { mode: 'full' })).json();
    const s = await status();
    expect(s.status).toBe('running');
    // The waiting incremental run was upgraded to full by the third request.
    expect(s.queued).toEqual(['full']);

    // Clearing while a run is in progress is refused and removes nothing.
    const ctx = await pw.site();
    const before = await liveFiles(ctx);
    const clear = await pw.manage('POST', '/static-export/clear', key);
    expect(clear.statusCode).toBe(409);
    expect(clear.json().error).toBeTruthy();
    expect(await liveFiles(ctx)).toEqual(before);

    const done = await eventually(
      async () => {
        const st = await status();
        return st.lastRun?.requestIds.includes(third.requestId) && st.status === 'idle' ? st : undefined;
      },
      'merged run',
      150_000,
    );
    expect(done.lastRun.requestIds).toEqual([second.requestId, third.requestId]);
    expect(done.lastRun.mode).toBe('full');
    expect(first.requestId).not.toBe(second.requestId);
    expect((await pw.world.app.inject({ method: 'GET', url: '/static-preview/en/post/alpha/' })).body).toContain('<h1>Alpha changed</h1>');

    // Both runs were one execution of the site's actor, which ended once nothing was queued.
    const handle = pw.world.services.temporal.client.workflow.getHandle(staticExportWorkflowId({ workspaceId: ctx.workspace._id, siteId: ctx.site._id }));
    await eventually(async () => (await handle.describe()).status.name === 'COMPLETED', 'actor end', 150_000);
    await checkHistory(handle, 'export-full-and-queued');
    tuning(2, 0);
  });

  it('rejects bad input and missing capabilities, starting nothing', async () => {
    const before = await status();
    const bad = await pw.manage('POST', '/static-export/run', key, { mode: 'partial' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatch(/mode/);
    const badCancel = await pw.manage('POST', '/static-export/cancel', key, { queued: 'yes' });
    expect(badCancel.statusCode).toBe(400);
    const badRuns = await pw.manage('GET', '/static-export/runs?limit=1000', reader);
    expect(badRuns.statusCode).toBe(400);
    const forbidden = await pw.manage('POST', '/static-export/run', reader, { mode: 'full' });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json().error).toBeTruthy();
    expect((await pw.manage('POST', '/static-export/cancel', reader, {})).statusCode).toBe(403);
    expect((await pw.manage('POST', '/static-export/clear', reader)).statusCode).toBe(403);
    const noRead = await pw.keyWith(['content:read']);
    expect((await pw.manage('GET', '/static-export', noRead)).statusCode).toBe(403);
    expect((await pw.manage('GET', '/static-export/download', noRead)).statusCode).toBe(403);
    const after = await status();
    expect(after.status).toBe('idle');
    expect(after.lastRun).toEqual(before.lastRun);
    expect(after.output).toEqual(before.output);
  });

  it('clear removes the output; the next incremental run renders everything again', async () => {
    const ctx = await pw.site();
    const count = (await liveFiles(ctx)).size;
    const res = await pw.manage('POST', '/static-export/clear', key);
    expect(res.statusCode).toBe(200);
    expect(res.json().removed).toBe(count);
    expect(await allDocs(ctx)).toBe(0);
    const s = await status();
    expect(s.output).toMatchObject({ files: 0, bytes: 0, version: null });
    expect(s.lastSuccessAt).toBeNull();
    expect((await pw.manage('GET', '/static-export/download', reader)).statusCode).toBe(404);

    const done = await runToEnd(pw, key, 'incremental');
    expect(done.lastRun).toMatchObject({ mode: 'full', rendered: 6 });
    expect(done.output.files).toBe(count);
  });
});
