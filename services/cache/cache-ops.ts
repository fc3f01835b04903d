import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { BadRequestError, ForbiddenError } from '../core/errors.ts';
import type { OperationContext } from '../core/context.ts';
import { hasCapability } from '../core/principal.ts';

const CacheView = z.object({
  name: z.string(),
  description: z.string(),
  reach: z.enum(['site', 'process']),
  entries: z.number().int().nullable(),
  details: z.record(z.string(), z.union([z.number(), z.string(), z.boolean(), z.null()])),
});

/** Site caches for everybody with the operation's capability; process-wide ones with platform rights only. */
function visibleCaches(ctx: OperationContext, platformRight: 'platform:read' | 'platform:manage') {
  const platform =
    hasCapability(ctx.principal, platformRight) &&
    (ctx.principal.kind === 'system' || ('isPlatformOperator' in ctx.principal && ctx.principal.isPlatformOperator));
  return ctx.services.caches.list().filter((cache) => cache.reach === 'site' || platform);
}

export const cacheStatsOp = defineOperation({
  id: 'cache.stats',
  surface: 'manage',
  method: 'GET',
  path: '/cache/stats',
  summary: 'Object-cache figures of the caches this gateway holds',
  description:
    "`site` caches report this site's entries only. `reach: process` caches (shared by every workspace of the gateway that answered) are listed only to callers holding `platform:read`.",
  requires: 'settings:read',
  input: z.object({}),
  output: z.object({ caches: z.array(CacheView) }),
  async handler(ctx) {
    const caches = await Promise.all(
      visibleCaches(ctx, 'platform:read').map(async (cache) => {
        const figures = await cache.stats(ctx);
        return { name: cache.name, description: cache.description, reach: cache.reach, entries: figures.entries, details: figures.details ?? {} };
      }),
    );
    return { caches };
  },
});

export const cacheClearOp = defineOperation({
  id: 'cache.clear',
  surface: 'manage',
  method: 'POST',
  path: '/cache/clear',
  summary: 'Clear the object cache and the page store',
  description:
    'Clears this site\'s caches, or only those named in `caches`. `reach: process` caches (every workspace\'s entries in this gateway) are cleared only for callers holding `platform:manage`: without it they are left out of "all", and naming one is a 403. An unknown name is a 400; nothing is cleared on a refusal.',
  requires: 'settings:manage',
  input: z.object({ caches: z.array(z.string().min(1)).min(1).max(50).optional() }),
  output: z.object({ cleared: z.array(z.string()) }),
  async handler(ctx, input) {
    const all = ctx.services.caches.list();
    const known = new Set(all.map((c) => c.name));
    const unknown = input.caches?.find((name) => !known.has(name));
    if (unknown) throw new BadRequestError(`Unknown cache: ${unknown}`);
    const allowed = visibleCaches(ctx, 'platform:manage');
    if (input.caches?.some((name) => !allowed.some((c) => c.name === name))) throw new ForbiddenError();
    const chosen = input.caches ? allowed.filter((c) => input.caches!.includes(c.name)) : allowed;
    for (const cache of chosen) await cache.clear(ctx);
    return { cleared: chosen.map((c) => c.name) };
  },
});

export const cacheOperations = [cacheStatsOp, cacheClearOp];
