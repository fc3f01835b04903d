import { z } from 'zod';
import { assertSwitch, countExportRun } from '../tenancy/quota-guard.ts';
import { defineOperation, type Surface } from '../core/operation.ts';
import { ConflictError } from '../core/errors.ts';
import { FileReplySchema } from '../core/file-reply.ts';
import { EXPORT_MODES, EXPORT_STORAGE, exportStateId, exportStates, readExportState, siteRuns, type RunSummary } from './model.ts';
import { cancelExportRun, exportProgress, requestExportRun } from './control.ts';
import { clearExportFiles, discardStaged } from './files.ts';
import { ARCHIVE_FORMATS, downloadReply } from './download.ts';
import { RUN_HISTORY } from './runner.ts';

const Mode = z.enum(EXPORT_MODES);

const RunView = z.object({
  runId: z.string(),
  mode: Mode,
  status: z.enum(['succeeded', 'failed', 'cancelled']),
  requestIds: z.array(z.string()),
  startedAt: z.string(),
  finishedAt: z.string(),
  rendered: z.number().int().describe('entries rendered'),
  written: z.number().int().describe('files whose bytes changed'),
  removed: z.number().int(),
  durationMs: z.number().int(),
  error: z.string().nullable(),
});

const StatusView = z.object({
  status: z.enum(['idle', 'queued', 'running']),
  progress: z
    .object({
      runId: z.string(),
      mode: Mode,
      phase: z.enum(['planning', 'rendering', 'finishing', 'cancelling']),
      total: z.number().int(),
      done: z.number().int(),
      rendered: z.number().int(),
      written: z.number().int(),
      removed: z.number().int(),
      startedAt: z.string().nullable(),
      /** Entries per second since the run started; null before the first batch. */
      rate: z.number().nullable(),
      /** Seconds left at the current rate; null while unknown. */
      etaSeconds: z.number().int().nullable(),
    })
    .nullable(),
  queued: z.array(Mode),
  lastRun: RunView.nullable(),
  lastSuccessAt: z.string().nullable(),
  lastError: z.string().nullable(),
  output: z.object({ storage: z.string(), files: z.number().int(), bytes: z.number().int(), version: z.string().nullable() }),
});

const runView = (run: RunSummary | null | undefined) =>
  run
    ? {
        runId: run.runId,
        mode: run.mode,
        status: run.status,
        requestIds: run.requestIds,
        startedAt: run.startedAt.toISOString(),
        finishedAt: run.finishedAt.toISOString(),
        rendered: run.rendered,
        written: run.written ?? 0,
        removed: run.removed,
        durationMs: run.finishedAt.getTime() - run.startedAt.getTime(),
        error: run.error,
      }
    : null;

const tag = (surface: Surface, id: string) => (surface === 'manage' ? `staticExport.${id}` : `staticExport.admin.${id}`);

const statusOp = (surface: Surface) =>
  defineOperation({
    id: tag(surface, 'status'),
    surface,
    method: 'GET',
    path: '/static-export',
    summary: 'Static export status: phase, pages done and total, rate, time left, the last run, the last error and the output',
    requires: 'settings:read',
    input: z.object({}),
    output: StatusView,
    async handler(ctx) {
      const [state, live] = await Promise.all([readExportState(ctx.db, ctx.site._id), exportProgress(ctx)]);
      const running = live.progress?.running ?? null;
      const queued = live.progress?.queued ?? [];
      // An open actor whose progress could not be read (no worker answering) still counts as running.
      const busy = running !== null || (live.running && live.progress === null);
      let progress = null;
      if (running) {
        const elapsed = running.startedAt ? (ctx.services.clock.now().getTime() - Date.parse(running.startedAt)) / 1000 : 0;
        const rate = running.done > 0 && elapsed > 0 ? Math.round((running.done / elapsed) * 100) / 100 : null;
        const { requestIds: _ids, ...shown } = running;
        progress = { ...shown, rate, etaSeconds: rate ? Math.ceil(Math.max(0, running.total - running.done) / rate) : null };
      }
      const lastFailed = state?.lastRun?.status === 'failed' ? state.lastRun : null;
      return {
        status: busy ? ('running' as const) : queued.length > 0 ? ('queued' as const) : ('idle' as const),
        progress,
        queued,
        lastRun: runView(state?.lastRun),
        lastSuccessAt: state?.lastSuccessStartedAt?.toISOString() ?? null,
        lastError: lastFailed?.error ?? null,
        output: {
          storage: `mongodb:${EXPORT_STORAGE}`,
          files: state?.output.files ?? 0,
          bytes: state?.output.bytes ?? 0,
          version: state?.outputVersion ?? null,
        },
      };
    },
  });

const runsOp = (surface: Surface) =>
  defineOperation({
    id: tag(surface, 'runs'),
    surface,
    method: 'GET',
    path: '/static-export/runs',
    summary: `History of export runs, newest first (the last ${RUN_HISTORY} are kept)`,
    requires: 'settings:read',
    input: z.object({ limit: z.coerce.number().int().min(1).max(RUN_HISTORY).default(20) }),
    output: z.object({ data: z.array(RunView) }),
    async handler(ctx, { limit }) {
      const rows = (await siteRuns(ctx.db, ctx.site._id)).slice(0, limit);
      return { data: rows.map((row) => runView(row)!) };
    },
  });

const runOp = (surface: Surface) =>
  defineOperation({
    id: tag(surface, 'run'),
    surface,
    method: 'POST',
    path: '/static-export/run',
    summary: 'Run a full or incremental static export',
    description:
      "Accepted (202) and run by the site's export workflow. Runs never overlap: a request made while a run is in progress is queued, and requests made while one waits are merged into it (a full request upgrades a waiting incremental run). `requestId` appears in `lastRun.requestIds` of `GET /static-export` once done. Incremental renders entries changed since the last successful run (every page after a design change, a full run after a theme switch); without one it runs as full. Passes the extra (heavy) limiter.",
    requires: 'settings:manage',
    errors: [409],
    heavy: true,
    status: 202,
    input: z.object({ mode: Mode.default('full') }),
    output: z.object({ requestId: z.string(), mode: Mode }),
    async handler(ctx, { mode }) {
      // Platform switch and daily quota first (services/tenancy/quota-guard.ts), before the workflow is signalled.
      assertSwitch(ctx, 'staticExport');
      await countExportRun(ctx, ctx.services.clock.now());
      return { requestId: await requestExportRun(ctx, mode), mode };
    },
  });

const cancelOp = (surface: Surface) =>
  defineOperation({
    id: tag(surface, 'cancel'),
    surface,
    method: 'POST',
    path: '/static-export/cancel',
    summary: 'Stop the run in progress (and, with `queued`, the waiting one); the last good export stays served',
    description: 'Accepted (202): the run stops after its current batch and drops what it wrote. 409 when no run is in progress or queued.',
    requires: 'settings:manage',
    errors: [409],
    status: 202,
    input: z.object({ queued: z.boolean().default(true) }),
    output: z.object({ cancelling: z.literal(true) }),
    async handler(ctx, { queued }) {
      if (!(await cancelExportRun(ctx, queued))) throw new ConflictError('No static export run is in progress');
      return { cancelling: true as const };
    },
  });

const downloadOp = (surface: Surface) =>
  defineOperation({
    id: tag(surface, 'download'),
    surface,
    method: 'GET',
    path: '/static-export/download',
    summary: 'Download the last good export as one archive (tar.gz by default; tar with Content-Length and byte ranges)',
    description: 'Built while it streams. Strong ETag (If-None-Match → 304); `format=tar` honours Range and If-Range. 404 before the first successful run.',
    requires: 'settings:read',
    errors: [416],
    input: z.object({ format: z.enum(ARCHIVE_FORMATS).default('tar.gz') }),
    output: FileReplySchema,
    produces: { contentTypes: ['application/gzip', 'application/x-tar'], ranges: true },
    async handler(ctx, { format }) {
      return downloadReply(ctx, format);
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
  errors: [409],
  input: z.object({}),
  output: z.object({ removed: z.number().int() }),
  async handler(ctx) {
    if ((await exportProgress(ctx)).running) throw new ConflictError('A static export run is in progress');
    const removed = (await readExportState(ctx.db, ctx.site._id))?.live?.files ?? 0;
    await discardStaged(ctx.db, ctx.site._id);
    await clearExportFiles(ctx.db, ctx.site._id);
    const now = ctx.services.clock.now();
    await exportStates(ctx.db).updateOne(
      { _id: exportStateId(ctx.site._id), siteId: ctx.site._id },
      {
        $set: { lastSuccessStartedAt: null, basis: null, output: { files: 0, bytes: 0 }, outputVersion: null, live: null, garbage: null, updatedAt: now },
        $setOnInsert: { status: 'idle', current: null, lastRun: null, generation: 0 },
      },
      { upsert: true },
    );
    return { removed };
  },
});

const bothSurfaces = (['manage', 'admin'] as const).flatMap((surface) => [
  statusOp(surface),
  runsOp(surface),
  runOp(surface),
  cancelOp(surface),
  downloadOp(surface),
]);

export const exportOperations = [...bothSurfaces, clearExportOp];
