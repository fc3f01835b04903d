import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { BadRequestError } from '../core/errors.ts';

export const REDIRECTS_COLLECTION = 'redirects';

export interface RedirectDoc {
  _id: string;
  siteId: string;
  /** Normalized path (see `normalizePath`), unique per site. */
  from: string;
  to: string;
  status: 301 | 302 | 307 | 308;
  enabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export const redirectsCollection = (ctx: Pick<OperationContext, 'db'>) => ctx.db.collection<RedirectDoc>(REDIRECTS_COLLECTION);

/** One form per path: no trailing slash (except the root), so `/a` and `/a/` cannot both exist. */
export function normalizePath(path: string): string {
  return path.length > 1 ? path.replace(/\/+$/, '') || '/' : path;
}

/** A site path: starts with one `/` (never `//`, which browsers read as another host); no spaces, query or fragment. */
const FromPath = z
  .string()
  .trim()
  .max(2000)
  .regex(/^\/(?!\/)[^\s?#]*$/, 'a path starting with / (no query, fragment or spaces)')
  .transform(normalizePath);

/** A path on this site (query and fragment allowed) or an absolute https URL. */
const Target = z
  .string()
  .trim()
  .max(2000)
  .refine((v) => /^\/(?!\/)\S*$/.test(v) || (/^https:\/\/\S+$/i.test(v) && URL.canParse(v)), 'a path starting with / or an absolute https URL')
  .transform((v) => (v.startsWith('/') ? (v.includes('?') || v.includes('#') ? v : normalizePath(v)) : v));

export const RedirectBody = z.object({
  from: FromPath,
  to: Target,
  status: z.union([z.literal(301), z.literal(302), z.literal(307), z.literal(308)]).default(301),
  enabled: z.boolean().default(true),
});
export type RedirectBody = z.infer<typeof RedirectBody>;

export const RedirectView = z.object({
  id: z.string(),
  from: z.string(),
  to: z.string(),
  status: z.number().int(),
  enabled: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const toRedirectView = (d: RedirectDoc): z.infer<typeof RedirectView> => ({
  id: d._id,
  from: d.from,
  to: d.to,
  status: d.status,
  enabled: d.enabled,
  createdAt: d.createdAt.toISOString(),
  updatedAt: d.updatedAt.toISOString(),
});

const MAX_HOPS = 20;

/**
 * Refuses a rule that would send a visitor in a circle: straight back to itself, or round a chain of
 * enabled rules back to its own `from`. A disabled rule cannot loop, so it is not checked.
 */
export async function assertNoLoop(ctx: OperationContext, body: RedirectBody, selfId?: string): Promise<void> {
  if (body.to === body.from) throw new BadRequestError('to: a redirect cannot point at its own path');
  if (!body.enabled || !body.to.startsWith('/')) return;
  let next = body.to;
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const rule = await redirectsCollection(ctx).findOne({ siteId: ctx.site._id, from: next, enabled: true, ...(selfId ? { _id: { $ne: selfId } } : {}) });
    if (!rule || !rule.to.startsWith('/')) return;
    if (rule.to === body.from) throw new BadRequestError(`to: this would make a redirect loop through ${rule.from}`);
    next = rule.to;
  }
  throw new BadRequestError('to: the redirect chain is too long');
}
