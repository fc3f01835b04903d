import type { OperationContext } from '../core/context.ts';
import { pageById } from '../core/paging.ts';
import { accessCollections, type UserDoc } from './model.ts';
import { accessChanged } from './access-change.ts';

/**
 * Platform operators are users of the operator's own site (the platform workspace's) whose
 * `platformOperator` flag is set; the flag is what gives `platform:read` and `platform:manage`
 * (roles.ts). The platform's `/operators` operations (services/platform/operator-ops.ts) manage
 * them through these. Every change bumps the site's access version, so keys, sessions and OAuth
 * tokens of the user gain or lose platform rights on their next request.
 */
export type OperatorRow = Pick<UserDoc, '_id' | 'email' | 'name'>;

/** Sets or clears the flag; the user after the change, or null when the site has no such user. */
export async function setPlatformOperator(ctx: OperationContext, userId: string, value: boolean): Promise<OperatorRow | null> {
  const user = await accessCollections(ctx.db).users.findOneAndUpdate(
    { _id: userId, siteId: ctx.site._id },
    { $set: { platformOperator: value, updatedAt: ctx.services.clock.now() } },
    { returnDocument: 'after' },
  );
  await accessChanged(ctx);
  return user;
}

export const pageOperators = (ctx: OperationContext, query: { limit: number; cursor?: string }) =>
  pageById(ctx, 'operators', accessCollections(ctx.db).users, { siteId: ctx.site._id, platformOperator: true }, query);

export async function isPlatformOperator(ctx: OperationContext, userId: string): Promise<boolean> {
  const found = await accessCollections(ctx.db).users.findOne({ _id: userId, siteId: ctx.site._id, platformOperator: true }, { projection: { _id: 1 } });
  return found !== null;
}

export async function anyPlatformOperator(ctx: OperationContext): Promise<boolean> {
  return (await accessCollections(ctx.db).users.countDocuments({ siteId: ctx.site._id, platformOperator: true }, { limit: 1 })) > 0;
}
