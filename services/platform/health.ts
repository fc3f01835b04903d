import { z } from 'zod';
import type { Services } from '../core/context.ts';
import { defineOperation } from '../core/operation.ts';
import { serviceVersion } from '../core/version.ts';

const Check = z.object({ status: z.enum(['ok', 'down']), latencyMs: z.number(), error: z.string().optional() });

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

export async function checkDependencies(services: Services) {
  const { connection } = services.temporal.client;
  const [database, temporal] = await Promise.all([
    timed(() => withTimeout(services.platformDb.command({ ping: 1 }), 2000)),
    timed(() => withTimeout(connection.workflowService.getSystemInfo({}), 2000)),
  ]);
  return { database, temporal };
}

export const health = defineOperation({
  id: 'health.get',
  surface: 'manage',
  method: 'GET',
  path: '/health',
  summary: 'Aggregate status and the checks of the database and Temporal (any valid key)',
  requires: 'authenticated',
  input: z.object({}),
  output: z.object({ status: z.enum(['ok', 'degraded']), checks: z.object({ database: Check, temporal: Check }) }),
  async handler(ctx) {
    const checks = await checkDependencies(ctx.services);
    const ok = Object.values(checks).every((check) => check.status === 'ok');
    return { status: ok ? ('ok' as const) : ('degraded' as const), checks };
  },
});

export const diagnostics = defineOperation({
  id: 'diagnostics.get',
  surface: 'manage',
  method: 'GET',
  path: '/diagnostics',
  summary: 'Version, migrations and runtime diagnostics',
  requires: 'site:admin',
  input: z.object({}),
  output: z.object({
    version: z.string(),
    migrations: z.object({ applied: z.array(z.object({ id: z.string(), appliedAt: z.string().nullable() })) }),
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
    checks: z.record(z.string(), Check),
    site: z.object({ id: z.string(), workspaceId: z.string() }),
  }),
  async handler(ctx) {
    const { services } = ctx;
    const applied = await services.platformDb
      .collection<{ _id: string; appliedAt?: Date }>('migrations')
      .find({})
      .sort({ _id: 1 })
      .limit(1000)
      .toArray();
    const memory = process.memoryUsage();
    return {
      version: serviceVersion,
      migrations: { applied: applied.map((m) => ({ id: m._id, appliedAt: m.appliedAt?.toISOString() ?? null })) },
      runtime: {
        node: process.version,
        platform: `${process.platform}-${process.arch}`,
        pid: process.pid,
        uptimeSeconds: Math.round(process.uptime()),
        memory: { rssBytes: memory.rss, heapUsedBytes: memory.heapUsed },
        environment: services.config.NODE_ENV,
        stateFeed: { trusted: services.changeFeed.trusted(), streamOpen: services.changeFeed.status().streamOpen, trustedForMs: services.changeFeed.status().trustedForMs },
      },
      checks: await checkDependencies(services),
      site: { id: ctx.site._id, workspaceId: ctx.workspace._id },
    };
  },
});

export const healthOperations = [health, diagnostics];
