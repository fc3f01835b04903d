import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { defineOperation } from '../core/operation.ts';
import { ConflictError, NotFoundError } from '../core/errors.ts';
import { pageById, pageEnvelope, PageQuery } from '../core/paging.ts';
import { accessCollections, type UserDoc } from '../access/model.ts';
import { accessChanged } from '../access/access-change.ts';
import { assertWithinCeiling } from '../access/grant-ceiling.ts';
import { PLATFORM_CAPABILITIES } from '../core/capabilities.ts';

/**
 * Platform operators are users of the operator's own site (the platform workspace's) whose
 * `platformOperator` flag is set; the flag is what gives `platform:read` and `platform:manage`
 * (services/access/roles.ts). Every change bumps the site's access version, so keys, sessions and
 * OAuth tokens of the user gain or lose platform rights on their next request.
 */
const OperatorView = z.object({ id: z.string(), email: z.string(), name: z.string() });
const operatorView = (user: UserDoc) => ({ id: user._id, email: user.email, name: user.name });
const UserId = z.object({ userId: z.string().min(1).max(64) });

async function setOperator(ctx: OperationContext, userId: string, value: boolean): Promise<UserDoc | null> {
  const user = await accessCollections(ctx.db).users.findOneAndUpdate(
    { _id: userId, siteId: ctx.site._id },
    { $set: { platformOperator: value, updatedAt: ctx.services.clock.now() } },
    { returnDocument: 'after' },
  );
  await accessChanged(ctx);
  return user;
}

export const listOperatorsOp = defineOperation({
  id: 'operators.list',
  surface: 'manage',
  method: 'GET',
  path: '/operators',
  summary: 'Platform operators (users of this site holding platform rights)',
  requires: 'platform:read',
  input: z.object(PageQuery),
  output: pageEnvelope(OperatorView),
  async handler(ctx, query) {
    const filter = { siteId: ctx.site._id, platformOperator: true };
    const { rows, page } = await pageById(ctx, 'operators', accessCollections(ctx.db).users, filter, query);
    return { data: rows.map(operatorView), page };
  },
});

export const grantOperatorOp = defineOperation({
  id: 'operators.grant',
  surface: 'manage',
  method: 'PUT',
  path: '/operators/:userId',
  summary: 'Make a user of this site a platform operator (idempotent)',
  requires: 'platform:manage',
  input: UserId,
  output: z.object({ operator: OperatorView }),
  async handler(ctx, { userId }) {
    // The flag gives both platform rights: the granter must hold both (a platform:manage-only key does not).
    assertWithinCeiling(PLATFORM_CAPABILITIES, ctx.principal);
    const user = await setOperator(ctx, userId, true);
    if (!user) throw new NotFoundError();
    return { operator: operatorView(user) };
  },
});

export const revokeOperatorOp = defineOperation({
  id: 'operators.revoke',
  surface: 'manage',
  method: 'DELETE',
  path: '/operators/:userId',
  summary: 'Take platform rights from a user; the last operator cannot be removed (409)',
  description:
    'Without transactions the rule is kept by checking after the write: if no operator is left, the flag is put back and the call answers 409, so two racing revocations of the last two operators leave at least one.',
  requires: 'platform:manage',
  errors: [409],
  status: 204,
  input: UserId,
  output: z.void(),
  async handler(ctx, { userId }) {
    const { users } = accessCollections(ctx.db);
    const current = await users.findOne({ _id: userId, siteId: ctx.site._id, platformOperator: true }, { projection: { _id: 1 } });
    if (!current) throw new NotFoundError();
    await setOperator(ctx, userId, false);
    const left = await users.countDocuments({ siteId: ctx.site._id, platformOperator: true }, { limit: 1 });
    if (left === 0) {
      await setOperator(ctx, userId, true);
      throw new ConflictError('The last platform operator cannot be removed');
    }
  },
});

export const operatorOperations = [listOperatorsOp, grantOperatorOp, revokeOperatorOp];
