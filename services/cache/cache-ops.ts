import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { BadRequestError } from '../core/errors.ts';
import { listCaches } from './caches.ts';
import './builtin-caches.ts';

const CacheView = z.object({
  name: z.string(),
  description: z.string(),
  reach: z.enum(['site', 'process']),
  entries: z.number().int().nullable(),
  details: z.record(z.string(), z.union([z.number(), z.string(), z.boolean(), z.null()])),
});

export const cacheStatsOp = defineOperation({
  id: 'cache.stats',
  surface: 'manage',
  method: 'GET',
  path: '/cache/stats',
  summary: 'Object-cache figures of the caches this gateway holds',
  description: '`reach: process` figures are those of the gateway that answered; `site` caches are shared through the database.',
  requires: 'settings:read',
  input: z.object({}),
  output: z.object({ caches: z.array(CacheView) }),
  async handler(ctx) {
    const caches = await Promise.all(
      listCaches(ctx.services).map(async (cache) => {
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
  description: 'Clears every registered cache, or only those named in `caches`. An unknown name is a 400 and nothing is cleared.',
  requires: 'settings:manage',
  input: z.object({ caches: z.array(z.string().min(1)).min(1).max(50).optional() }),
  output: z.object({ cleared: z.array(z.string()) }),
  async handler(ctx, input) {
    const all = listCaches(ctx.services);
    const known = new Set(all.map((c) => c.name));
    const unknown = input.caches?.find((name) => !known.has(name));
    if (unknown) throw new BadRequestError(`Unknown cache: ${unknown}`);
    const chosen = input.caches ? all.filter((c) => input.caches!.includes(c.name)) : all;
    for (const cache of chosen) await cache.clear(ctx);
    return { cleared: chosen.map((c) => c.name) };
  },
});

export const cacheOperations = [cacheStatsOp, cacheClearOp];
