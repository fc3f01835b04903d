import type { ChildProcess } from 'node:child_process';
import { kill9, spawnWorkerProcess } from '../support/worker-process.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationContext } from '../../services/core/context.ts';
import { readExportFile } from '../../services/export/files.ts';
import { startPluginWorld, type PluginWorld } from '../plugins/support.ts';
import { archivedPaths, call, liveFiles, stagedDocs } from './support.ts';
import { eventually } from '../support/polling.ts';

const spawnWorker = (pw: PluginWorld) => spawnWorkerProcess(pw.world.config, {}, 60_000);

/**
 * A worker process killed with SIGKILL in the middle of a run: the staged files it wrote are never
 * served, the next worker resumes the run (durable workflow, idempotent batches), and the finished
 * output holds every page exactly once, each complete (its bytes are its declared length).
 */
describe('static export: a worker SIGKILLed mid-run', { timeout: 300_000 }, () => {
  let pw: PluginWorld;
  let ctx: OperationContext;
  let key: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    pw = await startPluginWorld(); // no in-process worker: only the child processes work
    ctx = await pw.site();
    key = await pw.keyWith(['content:read', 'settings:read', 'settings:manage']);
    for (let i = 1; i <= 6; i++) {
      const created = await call<{ id: string }>(pw.world.services, ctx, 'content.create', { title: `Crash ${i}`, slug: `crash-${i}` });
      await call(pw.world.services, ctx, 'content.publish', { id: created.id });
    }
    // One entry per batch with a pause between batches: the kill lands with batches on both sides.
    Object.assign(pw.world.services.exportTuning, { batchSize: 1, batchPauseMs: 1500 });
  }, 120_000);
  afterAll(async () => {
    for (const child of children) await kill9(child);
    await pw?.close();
  }, 120_000);

  it('resumes on the next worker with no partial file in the output', async () => {
    const status = async () => (await pw.manage('GET', '/static-export', key)).json();
    const first = await spawnWorker(pw);
    children.push(first);
    const res = await pw.manage('POST', '/static-export/run', key, { mode: 'full' });
    expect(res.statusCode).toBe(202);
    const { requestId } = res.json();
    await eventually(
      async () => {
        const s = await status();
        return s.progress?.phase === 'rendering' && s.progress.done >= 2 ? s : undefined;
      },
      'run under way',
      150_000,
    );
    await kill9(first);

    // Dead worker, run open: its staged files exist but nothing is served yet.
    expect(await stagedDocs(ctx)).toBeGreaterThan(0);
    expect((await liveFiles(ctx)).size).toBe(0);
    expect((await status()).status).toBe('running');

    children.push(await spawnWorker(pw));
    const done = await eventually(
      async () => {
        const s = await status();
        return s.lastRun?.requestIds.includes(requestId) && s.status === 'idle' ? s : undefined;
      },
      'resumed run',
      240_000,
    );
    expect(done.lastRun).toMatchObject({ mode: 'full', status: 'succeeded', rendered: 6, error: null });
    expect(await stagedDocs(ctx)).toBe(0);

    const live = await liveFiles(ctx);
    for (let i = 1; i <= 6; i++) expect(live.has(`en/post/crash-${i}/index.html`), `crash-${i}`).toBe(true);
    // One live version per path, and every file complete.
    const archived = await archivedPaths(ctx);
    expect(archived.length).toBe(live.size);
    expect(new Set(archived)).toEqual(new Set(live.keys()));
    expect(done.output.files).toBe(live.size);
    for (const path of live.keys()) {
      const file = (await readExportFile(ctx.db, ctx.site._id, path))!;
      expect(file.body.length, path).toBe(file.file.length);
    }
    expect((await readExportFile(ctx.db, ctx.site._id, 'en/post/crash-1/index.html'))!.body.toString('utf8')).toContain('<h1>Crash 1</h1>');
  });
});
