import { z } from 'zod';
import type { Services } from '../core/context.ts';
import { defineOperation } from '../core/operation.ts';
import { serviceVersion } from '../core/version.ts';

const Check = z.object({ status: z.enum(['ok', 'down']), latencyMs: z.number(), error: z.string().optional() });
const WorkerCheck = Check.extend({
  /** Workers seen polling the task queue recently, for workflow tasks and for activity tasks. */
  pollers: z.object({ workflow: z.number(), activity: z.number() }),
});

/** Temporal drops a poller after 5 minutes without a poll; a live worker polls continuously. */
const POLLER_FRESH_MS = 2 * 60_000;

async function timed(run: () => Promise<unknown>): Promise<z.input<typeof Check>> {
  const started = performance.now();
  try {
    await run();
    return { status: 'ok', latencyMs: Math.round(performance.now() - started) };
  } catch (error) {
    // The check says which dependency is down, not its internals (no hosts, no stack).
    return { status: 'down', latencyMs: Math.round(performance.now() - started), error: (error as Error).name || 'Error' };
  }
}

const withTimeout = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms).unref())]);

/**
 * Whether a worker polls this deployment's task queue (DescribeTaskQueue pollers), for workflow
 * and activity tasks: without one, exports, deliveries and schedules would stall unseen.
 */
async function checkWorker(services: Services): Promise<z.input<typeof WorkerCheck>> {
  const { connection } = services.temporal.client;
  const pollers = { workflow: 0, activity: 0 };
  const result = await timed(async () => {
    const now = Date.now();
    for (const [kind, taskQueueType] of [
      ['workflow', 1],
      ['activity', 2],
    ] as const) {
      const described = await withTimeout(
        connection.workflowService.describeTaskQueue({
          namespace: services.config.TEMPORAL_NAMESPACE,
          taskQueue: { name: services.temporal.taskQueue },
          taskQueueType,
        }),
        2000,
      );
      pollers[kind] = (described.pollers ?? []).filter((poller) => {
        const seconds = Number(poller.lastAccessTime?.seconds ?? 0);
        return now - seconds * 1000 < POLLER_FRESH_MS;
      }).length;
    }
    if (pollers.workflow === 0 || pollers.activity === 0) throw Object.assign(new Error('no worker polls the task queue'), { name: 'NoWorker' });
  });
  return { ...result, pollers };
}

/** The engines alone, each asked now within 2 s (the probes read the engine watch instead: http/probes.ts). */
export async function checkEngines(services: Services) {
  const { connection } = services.temporal.client;
  const [database, temporal] = await Promise.all([
    timed(() => withTimeout(services.platformDb.command({ ping: 1 }), 2000)),
    timed(() => withTimeout(connection.workflowService.getSystemInfo({}), 2000)),
  ]);
  return { database, temporal };
}

export async function checkDependencies(services: Services) {
  const [engines, worker] = await Promise.all([checkEngines(services), checkWorker(services)]);
  return { ...engines, worker };
}

export const healthOp = defineOperation({
  id: 'health.get',
  surface: 'manage',
  method: 'GET',
  path: '/health',
  summary: 'Aggregate status and the checks of the database, Temporal and the worker (any valid key)',
  description: '`degraded` when an engine is down or no worker polls the task queue (exports, deliveries and schedules would stall).',
  requires: 'authenticated',
  input: z.object({}),
  output: z.object({ status: z.enum(['ok', 'degraded']), checks: z.object({ database: Check, temporal: Check, worker: WorkerCheck }) }),
  async handler(ctx) {
    const checks = await checkDependencies(ctx.services);
    const ok = Object.values(checks).every((check) => check.status === 'ok');
    return { status: ok ? ('ok' as const) : ('degraded' as const), checks };
  },
});

export const diagnosticsOp = defineOperation({
  id: 'diagnostics.get',
  surface: 'manage',
  method: 'GET',
  path: '/diagnostics',
  summary: 'Version, runtime diagnostics and the checks of /health',
  description: 'No migrations field: the service has no migration runner (indexes are created idempotently), so there is nothing true to list.',
  requires: 'site:admin',
  input: z.object({}),
  output: z.object({
    version: z.string(),
    runtime: z.object({
      node: z.string(),
      platform: z.string(),
      pid: z.number(),
      uptimeSeconds: z.number(),
      memory: z.object({ rssBytes: z.number(), heapUsedBytes: z.number() }),
      environment: z.string(),
      /** This gateway's in-memory access state (docs/access.md): held only while `trusted`. */
      stateFeed: z.object({ trusted: z.boolean(), streamOpen: z.boolean(), trustedForMs: z.number() }),
    }),
    checks: z.record(z.string(), WorkerCheck.partial({ pollers: true })),
    site: z.object({ id: z.string(), workspaceId: z.string() }),
  }),
  async handler(ctx) {
    const { services } = ctx;
    const memory = process.memoryUsage();
    return {
      version: serviceVersion,
      runtime: {
        node: process.version,
        platform: `${process.platform}-${process.arch}`,
        pid: process.pid,
        uptimeSeconds: Math.round(process.uptime()),
        memory: { rssBytes: memory.rss, heapUsedBytes: memory.heapUsed },
        environment: services.config.NODE_ENV,
        stateFeed: {
          trusted: services.changeFeed.trusted(),
          streamOpen: services.changeFeed.status().streamOpen,
          trustedForMs: services.changeFeed.status().trustedForMs,
        },
      },
      checks: await checkDependencies(services),
      site: { id: ctx.site._id, workspaceId: ctx.workspace._id },
    };
  },
});

export const healthOperations = [healthOp, diagnosticsOp];
