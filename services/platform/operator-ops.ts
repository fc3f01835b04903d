import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { ConflictError, NotFoundError } from '../core/errors.ts';
import { pageEnvelope, PageQuery } from '../core/paging.ts';
import { anyPlatformOperator, isPlatformOperator, pageOperators, setPlatformOperator, type OperatorRow } from '../access/operators.ts';
import { assertWithinCeiling } from '../access/grant-ceiling.ts';
import { PLATFORM_CAPABILITIES } from '../core/capabilities.ts';

/**
 * Platform operators are users of the operator's own site (the platform workspace's) whose
 * `platformOperator` flag is set; the flag is what gives `platform:read` and `platform:manage`.
 * The access feature keeps the flag (services/access/operators.ts); these operations expose it.
 */
const OperatorView = z.object({ id: z.string(), email: z.string(), name: z.string() });
const operatorView = (user: OperatorRow) => ({ id: user._id, email: user.email, name: user.name });
const UserId = z.object({ userId: z.string().min(1).max(64) });

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
    const { rows, page } = await pageOperators(ctx, query);
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
    const user = await setPlatformOperator(ctx, userId, true);
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
    if (!(await isPlatformOperator(ctx, userId))) throw new NotFoundError();
    await setPlatformOperator(ctx, userId, false);
    if (!(await anyPlatformOperator(ctx))) {
      await setPlatformOperator(ctx, userId, true);
      throw new ConflictError('The last platform operator cannot be removed');
    }
  },
});

export const operatorOperations = [listOperatorsOp, grantOperatorOp, revokeOperatorOp];
