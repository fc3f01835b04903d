import { z } from 'zod';
import { NotFoundError } from '../core/errors.ts';
import { definePublicOperation } from '../public-read/runner.ts';
import { normalizePath, redirectsCollection } from './redirects.ts';

/**
 * Lets a headless frontend (or an edge function) ask where an old path goes. Only enabled rules
 * count. Answers are cached with the site's public content generation, which redirect writes bump.
 */
export const publicResolveRedirectOp = definePublicOperation({
  id: 'public.redirects.resolve',
  path: '/redirects',
  summary: 'Where a path redirects to (`?path=/old`); 404 when no enabled rule matches',
  input: z.object({ path: z.string().max(2000).regex(/^\//, 'a path starting with /') }),
  output: z.object({ from: z.string(), to: z.string(), status: z.number().int() }),
  async handler(ctx, { path }) {
    const from = normalizePath(path.split(/[?#]/)[0]);
    const rule = await redirectsCollection(ctx).findOne({ siteId: ctx.site._id, from, enabled: true });
    if (!rule) throw new NotFoundError('No redirect for this path');
    return { from: rule.from, to: rule.to, status: rule.status };
  },
});
