import type { OperationContext } from '../core/context.ts';
import { topics } from '../core/topics.ts';
import { bumpAccessVersion } from './site-settings-store.ts';

/**
 * After any write that can change who gets in (a key, a user, a role): bump the site's access
 * version, then return only once every live gateway has dropped what it held for the site
 * (docs/access.md, "State held by each gateway").
 */
export async function accessChanged(ctx: Pick<OperationContext, 'db' | 'site' | 'services'>): Promise<void> {
  await bumpAccessVersion(ctx.db, ctx.site._id);
  await ctx.services.changeFeed.publish(topics.siteAccess(ctx.site._id));
}
