import { z } from 'zod';
import { assertSwitch, countExportRun } from '../platform/quota-guard.ts';
import { defineOperation } from '../core/operation.ts';
import { ConflictError } from '../core/errors.ts';
import { EXPORT_BUCKET, EXPORT_MODES, exportStates, readExportState, type RunSummary } from './model.ts';
import { exportProgress, requestExportRun } from './control.ts';
import { clearExportFiles } from './files.ts';

const Mode = z.enum(EXPORT_MODES);

const RunView = z.object({
  runId: z.string(),
  mode: Mode,
  status: z.enum(['succeeded', 'failed']),
  requestIds: z.array(z.string()),
  startedAt: z.string(),
  finishedAt: z.string(),
  rendered: z.number().int(),
  removed: z.number().int(),
  error: z.string().nullable(),
});

const StatusView = z.object({
  status: z.enum(['idle', 'queued', 'running']),
  progress: z
    .object({
      runId: z.string(),
      mode: Mode,
      phase: z.enum(['planning', 'rendering', 'finishing']),
      total: z.number().int(),
      done: z.number().int(),
      rendered: z.number().int(),
      removed: z.number().int(),
      startedAt: z.string().nullable(),
    })
    .nullable(),
  queued: z.array(Mode),
  lastRun: RunView.nullable(),
  lastSuccessAt: z.string().nullable(),
  output: z.object({ storage: z.string(), files: z.number().int(), bytes: z.number().int() }),
});

const runView = (run: RunSummary | null | undefined) =>
  run ? { ...run, startedAt: run.startedAt.toISOString(), finishedAt: run.finishedAt.toISOString() } : null;

export const exportStatusOp = defineOperation({
  id: 'staticExport.status',
  surface: 'manage',
  method: 'GET',
  path: '/static-export',
  summary: 'Static export status: the run in progress (live progress), queued runs, the last run and the output',
  requires: 'settings:read',
  input: z.object({}),
  output: StatusView,
  async handler(ctx) {
    const [state, live] = await Promise.all([readExportState(ctx.db, ctx.site._id), exportProgress(ctx)]);
    const running = live.progress?.running ?? null;
    const queued = live.progress?.queued ?? [];
    // An open actor whose progress could not be read (no worker answering) still counts as running.
    const busy = running !== null || (live.running && live.progress === null);
    return {
      status: busy ? ('running' as const) : queued.length > 0 ? ('queued' as const) : ('idle' as const),
      progress: running
        ? { runId: running.runId, mode: running.mode, phase: running.phase, total: running.total, done: running.done, rendered: running.rendered, removed: running.removed, startedAt: running.startedAt }
        : null,
      queued,
      lastRun: runView(state?.lastRun),
      lastSuccessAt: state?.lastSuccessStartedAt?.toISOString() ?? null,
      output: { storage: `gridfs:${EXPORT_BUCKET}`, files: state?.output.files ?? 0, bytes: state?.output.bytes ?? 0 },
    };
  },
});

export const runExportOp = defineOperation({
  id: 'staticExport.run',
  surface: 'manage',
  method: 'POST',
  path: '/static-export/run',
  summary: 'Run a full or incremental static export',
  description:
    'Accepted (202) and run by the site\'s export workflow. Runs never overlap: a request made while a run is in progress is queued, and requests made while one waits are merged into it (a full request upgrades a waiting incremental run). `requestId` appears in `lastRun.requestIds` of `GET /static-export` once done. Incremental renders entries changed since the last successful run; without one it runs as full.',
  requires: 'settings:manage',
  errors: [409],
  heavy: true,
  status: 202,
  input: z.object({ mode: Mode.default('full') }),
  output: z.object({ requestId: z.string(), mode: Mode }),
  async handler(ctx, { mode }) {
    // Platform switch and daily quota first (services/platform/quota-guard.ts).
    assertSwitch(ctx, 'staticExport');
    await countExportRun(ctx, ctx.services.clock.now());
    return { requestId: await requestExportRun(ctx, mode), mode };
  },
});

export const clearExportOp = defineOperation({
  id: 'staticExport.clear',
  surface: 'manage',
  method: 'POST',
  path: '/static-export/clear',
  summary: 'Delete the static export output',
  description: '409 while a run is in progress or queued. The next incremental run renders everything.',
  requires: 'settings:manage',
  input: z.object({}),
  output: z.object({ removed: z.number().int() }),
  async handler(ctx) {
    if ((await exportProgress(ctx)).running) throw new ConflictError('A static export run is in progress');
    const removed = await clearExportFiles(ctx.db, ctx.site._id);
    const now = ctx.services.clock.now();
    await exportStates(ctx.db).updateOne(
      { _id: ctx.site._id, siteId: ctx.site._id },
      {
        $set: { lastSuccessStartedAt: null, output: { files: 0, bytes: 0 }, updatedAt: now },
        $setOnInsert: { status: 'idle', current: null, lastRun: null },
      },
      { upsert: true },
    );
    return { removed };
  },
});

export const exportOperations = [exportStatusOp, runExportOp, clearExportOp];
