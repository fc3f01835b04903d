import type { OperationContext } from '../core/context.ts';

/**
 * The Public API switch (`api.publicEnabled` in the site settings), on unless an administrator
 * turned it off. TEMPORARY: reads the site's `settings` document directly until the settings
 * feature exports its own reader; then this file becomes a one-line call to it.
 */
export async function readPublicApiSwitch(ctx: OperationContext): Promise<boolean> {
  const doc = await ctx.db
    .collection<{ siteId: string; api?: { publicEnabled?: unknown }; values?: { api?: { publicEnabled?: unknown } } }>('settings')
    .findOne({ siteId: ctx.site._id });
  const value = doc?.api?.publicEnabled ?? doc?.values?.api?.publicEnabled;
  return value !== false;
}
