import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { deleteDesign, readDesign, writeDesign } from './store.ts';
import { DEFAULT_PERMALINKS, PERMALINK_TAGS } from '../core/permalinks.ts';
import { redirectMovedEntries } from './permalink-moves.ts';
import type { OperationContext } from '../core/context.ts';

const Structure = z
  .string()
  .trim()
  .max(200)
  .regex(/^\/(?:[a-z0-9_%-]+\/)*(?:[a-z0-9_%-]+\/?)?$/, 'a path like /%year%/%postname%/')
  .refine((s) => (s.match(/%[a-z_]+%/g) ?? []).every((tag) => (PERMALINK_TAGS as readonly string[]).includes(tag)), `only the tags ${PERMALINK_TAGS.join(' ')}`)
  .refine((s) => s.includes('%postname%') || s.includes('%post_id%'), 'must contain %postname% or %post_id%');

const Base = z
  .string()
  .trim()
  .regex(/^[a-z0-9]+(?:[-/][a-z0-9]+)*$/, 'a path segment like topics or blog/category')
  .max(100);

const Permalinks = z.object({
  structure: Structure,
  categoryBase: Base,
  tagBase: Base,
  /** Content type slug → URL base of its entries (`page` has none by default: `/about`). */
  typeBases: z.record(z.string(), Base.or(z.literal(''))).default({}),
});
type Permalinks = z.infer<typeof Permalinks>;

const current = async (ctx: OperationContext): Promise<Permalinks> => (await readDesign<Permalinks>(ctx, 'permalinks', 'default'))?.value ?? DEFAULT_PERMALINKS;

const View = Permalinks.extend({ customized: z.boolean(), updatedAt: z.string().nullable() });

export const getPermalinksOp = defineOperation({
  id: 'permalinks.get',
  surface: 'manage',
  method: 'GET',
  path: '/permalinks',
  summary: 'Permalink structure and bases',
  requires: 'content:read',
  scope: 'none',
  input: z.object({}),
  output: View,
  async handler(ctx) {
    const doc = await readDesign<Permalinks>(ctx, 'permalinks', 'default');
    return { ...(doc?.value ?? DEFAULT_PERMALINKS), customized: doc !== null, updatedAt: doc ? doc.updatedAt.toISOString() : null };
  },
});

export const putPermalinksOp = defineOperation({
  id: 'permalinks.put',
  surface: 'manage',
  method: 'PUT',
  path: '/permalinks',
  summary: 'Replace the permalink settings; every published entry whose path moves gets a 301 redirect from its old path',
  requires: 'settings:manage',
  input: Permalinks,
  output: View,
  async handler(ctx, value) {
    const before = await current(ctx);
    const doc = await writeDesign(ctx, 'permalinks', 'default', value);
    await redirectMovedEntries(ctx, before, value);
    return { ...value, customized: true, updatedAt: doc.updatedAt.toISOString() };
  },
});

export const resetPermalinksOp = defineOperation({
  id: 'permalinks.reset',
  surface: 'manage',
  method: 'DELETE',
  path: '/permalinks',
  summary: 'Back to the default structure (/%postname%/); moved entries get redirects as with PUT',
  requires: 'settings:manage',
  input: z.object({}),
  output: View,
  async handler(ctx) {
    const before = await current(ctx);
    await deleteDesign(ctx, 'permalinks', 'default');
    await redirectMovedEntries(ctx, before, DEFAULT_PERMALINKS);
    return { ...DEFAULT_PERMALINKS, customized: false, updatedAt: null };
  },
});

export const permalinkOperations = [getPermalinksOp, putPermalinksOp, resetPermalinksOp];
