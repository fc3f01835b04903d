import type { OperationContext } from '../core/context.ts';
import { readAccessState } from '../site/settings-store.ts';

/** The Public API switch (`api.publicEnabled` in the site settings, on by default), via the settings feature. */
export async function readPublicApiSwitch(ctx: OperationContext): Promise<boolean> {
  return (await readAccessState(ctx.db, ctx.site._id)).publicEnabled;
}
