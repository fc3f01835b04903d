import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPluginWorld, type PluginWorld } from '../plugins/support.ts';
import { configureStaticExport } from '../../services/export/control.ts';
import { exportFiles } from '../../services/export/model.ts';
import { staticExportWorkflowId } from '../../workflows/contracts/static-export.ts';
import { readExportFile } from '../../services/export/files.ts';
import { checkHistory } from '../support/histories.ts';

async function until<T>(check: () => Promise<T | undefined | null | false>, label: string, timeoutMs = 150_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// Generous timeouts: a run is several activities on a shared dev server that other suites load too.
describe('static export', { timeout: 240_000 }, () => {
  let pw: PluginWorld;
  let key: string;
  let reader: string;
  const ids: Record<string, string> = {};

  const status = async () => (await pw.manage('GET', '/static-export', reader)).json();
  const files = async () => {
    const ctx = await pw.site();
    return exportFiles(ctx.db).find({ 'metadata.siteId': ctx.site._id }).sort({ _id: 1 }).toArray();
  };
  const read = async (path: string) => {
    const ctx = await pw.site();
    return (await readExportFile(ctx.db, ctx.site._id, path))?.body.toString('utf8');
  };
  /** Starts a run and waits until a finished run served this request. */
  const runToEnd = async (mode: string) => {
    const res = await pw.manage('POST', '/static-export/run', key, { mode });
    expect(res.statusCode).toBe(202);
    const { requestId } = res.json();
    return until(async () => {
      const s = await status();
      return s.lastRun?.requestIds.includes(requestId) && s.status === 'idle' ? s : undefined;
    }, `export ${requestId}`);
  };
  const entry = async (title: string, publish = true) => {
    const created = await pw.manage('POST', '/content', key, { title, blocks: { version: 1, blocks: [{ type: 'paragraph', text: `Body of ${title} <b>` }] } });
    expect(created.statusCode).toBe(201);
    const { id } = created.json();
    if (publish) expect((await pw.manage('POST', `/content/${id}/publish`, key)).statusCode).toBe(200);
    return id as string;
  };

  beforeAll(async () => {
    pw = await startPluginWorld({ worker: true });
    // Small batches with a pause, so a test can watch progress move.
    configureStaticExport(pw.world.services, { batchSize: 2, batchPauseMs: 1500 });
    key = await pw.keyWith(['content:read', 'content:create', 'content:update', 'content:publish', 'content:delete', 'settings:read', 'settings:manage']);
    reader = await pw.keyWith(['settings:read']);
    for (const title of ['Alpha', 'Bravo', 'Charlie', 'Delta']) ids[title] = await entry(title);
    ids.Draft = await entry('Draft only', false);
  }, 300_000);
  afterAll(() => pw?.close(), 120_000);

  it('starts idle with no output', async () => {
    const s = await status();
    expect(s).toMatchObject({ status: 'idle', progress: null, queued: [], lastRun: null, lastSuccessAt: null, output: { files: 0, bytes: 0 } });
  });

  it('runs a full export through the site workflow, with live progress, and writes HTML + JSON of published entries', async () => {
    const res = await pw.manage('POST', '/static-export/run', key, { mode: 'full' });
    expect(res.statusCode).toBe(202);
    const { requestId } = res.json();
    const live = await until(async () => {
      const s = await status();
      return s.status === 'running' && s.progress?.phase === 'rendering' && s.progress.done >= 1 ? s : undefined;
    }, 'progress');
    expect(live.progress).toMatchObject({ mode: 'full', total: 4 });
    expect(live.progress.done).toBeLessThan(4);

    const ctx = await pw.site();
    const handle = pw.world.services.temporal.client.workflow.getHandle(staticExportWorkflowId({ workspaceId: ctx.workspace._id, siteId: ctx.site._id }));
    expect((await handle.describe()).status.name).toBe('RUNNING');

    const done = await until(async () => {
      const s = await status();
      return s.lastRun?.requestIds.includes(requestId) ? s : undefined;
    }, 'run end');
    expect(done.lastRun).toMatchObject({ mode: 'full', status: 'succeeded', rendered: 4, error: null });
    expect(done.output.files).toBe(10);
    expect(done.lastSuccessAt).toBeTruthy();

    const paths = (await files()).map((f) => f.metadata.path);
    expect(paths).toContain('index.html');
    expect(paths).toContain('index.json');
    expect(paths).toContain('en/post/alpha/index.html');
    expect(paths).toContain('en/post/alpha.json');
    expect(paths.some((p) => p.includes('draft'))).toBe(false);
    const html = await read('en/post/alpha/index.html');
    expect(html).toContain('<h1>Alpha</h1>');
    expect(html).toContain('<p>Body of Alpha &lt;b&gt;</p>');
    expect(html).toContain('theme=classic');
    expect(JSON.parse((await read('en/post/alpha.json'))!)).toMatchObject({ id: ids.Alpha, title: 'Alpha', slug: 'alpha' });
    expect(JSON.parse((await read('index.json'))!).items).toHaveLength(4);
  });

  it('incremental: re-renders only the entries changed since the last run and drops withdrawn ones', async () => {
    const before = new Map((await files()).map((f) => [f.metadata.path, f.metadata.runId]));
    const patched = await pw.manage('PATCH', `/content/${ids.Bravo}`, key, { title: 'Bravo two' });
    expect(patched.statusCode).toBe(200);
    expect((await pw.manage('POST', `/content/${ids.Bravo}/publish`, key)).statusCode).toBe(200);
    expect((await pw.manage('POST', `/content/${ids.Charlie}/unpublish`, key)).statusCode).toBe(200);
    const theme = await pw.keyWith(['themes:activate']);
    expect((await pw.manage('POST', '/themes/minimal/activate', theme)).statusCode).toBe(200);

    const done = await runToEnd('incremental');
    expect(done.lastRun).toMatchObject({ mode: 'incremental', status: 'succeeded', rendered: 1, removed: 2 });
    const after = await files();
    const runId = done.lastRun.runId;
    const byPath = new Map(after.map((f) => [f.metadata.path, f.metadata.runId]));
    // Unchanged entries keep the files of the earlier run.
    expect(byPath.get('en/post/alpha/index.html')).toBe(before.get('en/post/alpha/index.html'));
    expect(byPath.get('en/post/delta.json')).toBe(before.get('en/post/delta.json'));
    expect(byPath.get('en/post/bravo/index.html')).toBe(runId);
    expect(byPath.has('en/post/charlie/index.html')).toBe(false);
    expect(byPath.has('en/post/charlie.json')).toBe(false);
    const bravo = await read('en/post/bravo/index.html');
    expect(bravo).toContain('<h1>Bravo two</h1>');
    expect(bravo).toContain('theme=minimal');
    expect(JSON.parse((await read('index.json'))!).items.map((i: { title: string }) => i.title).sort()).toEqual(['Alpha', 'Bravo two', 'Delta']);
    expect(done.output.files).toBe(8);
  });

  it('serialises runs: requests made during a run queue behind it and are merged', async () => {
    // A longer pause keeps the first run going while the next two requests arrive.
    configureStaticExport(pw.world.services, { batchSize: 1, batchPauseMs: 3000 });
    const first = (await pw.manage('POST', '/static-export/run', key, { mode: 'full' })).json();
    await until(async () => ((await status()).status === 'running' ? true : undefined), 'first run');
    const second = (await pw.manage('POST', '/static-export/run', key, { mode: 'incremental' })).json();
    const third = (await pw.manage('POST', '/static-export/run', key, { mode: 'full' })).json();
    const s = await status();
    expect(s.status).toBe('running');
    // The waiting incremental run was upgraded to full by the third request.
    expect(s.queued).toEqual(['full']);

    // Clearing while a run is in progress is refused and removes nothing (every page stays readable
    // while the run rewrites it).
    const paths = async () => [...new Set((await files()).map((f) => f.metadata.path))].sort();
    const before = await paths();
    const clear = await pw.manage('POST', '/static-export/clear', key);
    expect(clear.statusCode).toBe(409);
    expect(clear.json().error).toBeTruthy();
    expect(await paths()).toEqual(before);

    const done = await until(async () => {
      const st = await status();
      return st.lastRun?.requestIds.includes(third.requestId) && st.status === 'idle' ? st : undefined;
    }, 'merged run');
    expect(done.lastRun.requestIds).toEqual([second.requestId, third.requestId]);
    expect(done.lastRun.mode).toBe('full');
    expect(first.requestId).not.toBe(second.requestId);

    // Both runs were one execution of the site's actor, which ended once nothing was queued.
    const ctx = await pw.site();
    const handle = pw.world.services.temporal.client.workflow.getHandle(staticExportWorkflowId({ workspaceId: ctx.workspace._id, siteId: ctx.site._id }));
    await until(async () => (await handle.describe()).status.name === 'COMPLETED', 'actor end');
    await checkHistory(handle, 'export-full-and-queued');
    configureStaticExport(pw.world.services, { batchSize: 2, batchPauseMs: 0 });
  });

  it('rejects bad input and missing capabilities, starting nothing', async () => {
    const before = await status();
    const bad = await pw.manage('POST', '/static-export/run', key, { mode: 'partial' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatch(/mode/);
    const forbidden = await pw.manage('POST', '/static-export/run', reader, { mode: 'full' });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json().error).toBeTruthy();
    const forbiddenClear = await pw.manage('POST', '/static-export/clear', reader);
    expect(forbiddenClear.statusCode).toBe(403);
    const noRead = await pw.manage('GET', '/static-export', await pw.keyWith(['content:read']));
    expect(noRead.statusCode).toBe(403);
    const after = await status();
    expect(after.status).toBe('idle');
    expect(after.lastRun).toEqual(before.lastRun);
    expect(after.output).toEqual(before.output);
  });

  it('clear removes the output; the next incremental run renders everything again', async () => {
    const res = await pw.manage('POST', '/static-export/clear', key);
    expect(res.statusCode).toBe(200);
    expect(res.json().removed).toBe(8);
    expect(await files()).toEqual([]);
    const ctx = await pw.site();
    expect(await ctx.db.collection('export.chunks').countDocuments({})).toBe(0);
    const s = await status();
    expect(s.output).toMatchObject({ files: 0, bytes: 0 });
    expect(s.lastSuccessAt).toBeNull();

    const done = await runToEnd('incremental');
    expect(done.lastRun).toMatchObject({ mode: 'full', rendered: 3 });
    expect(done.output.files).toBe(8);
  });
});
