import type { Db } from 'mongodb';
import type { OperationContext } from '../core/context.ts';
import type { Capability } from '../core/capabilities.ts';
import type { Principal } from '../core/principal.ts';
import { ForbiddenError } from '../core/errors.ts';
import { accessCollections, type ApiKeyDoc, type UserDoc } from './model.ts';
import { effectiveCapabilities, type Policy } from './roles.ts';
import { accessOfUser, roleCapabilities } from './user-access.ts';

/**
 * The one rule for handing out power (docs/access.md, "Grant ceiling and reach"): whatever a caller gives or
 * hands over must be held by the caller at this moment. A key's or OAuth token's principal holds
 * its capabilities ∩ its owner's current ones, a session its user's, so a narrow key is held to
 * what it can do itself, not to what its owner could. Platform rights count like any other, and
 * only the operator flag gives them: a site role can therefore never reach an operator.
 *
 * Refusals are the generic 403 and come before any write.
 */

/** What grants: the calling principal, or (service-layer key creation) the creator's capabilities. */
export type Granter = Principal | { capabilities: ReadonlySet<Capability> };

/** `given` is a subset of what the granter holds now (the system principal holds everything). */
export function assertWithinCeiling(given: Iterable<Capability>, granter: Granter): void {
  if ('kind' in granter) {
    if (granter.kind === 'system') return;
    if (granter.kind === 'anonymous') throw new ForbiddenError();
  }
  for (const capability of given) if (!granter.capabilities.has(capability)) throw new ForbiddenError();
}

/**
 * Acting on an account — its role, policy, name or password, deleting it, or any of its keys —
 * needs every capability the account holds now: a password set by someone else hands the account
 * over, so only a caller who could do everything it does may touch it. The account's own session
 * always qualifies; a key of its own qualifies only when it holds all of the account's rights.
 */
export async function assertAccountInReach(ctx: OperationContext, user: UserDoc, granter: Granter = ctx.principal): Promise<void> {
  assertWithinCeiling((await accessOfUser(ctx.db, user)).capabilities, granter);
}

/**
 * Every operation on a key (update, rotation, revocation, deletion) checks its owner like the
 * account itself, and its own capabilities too: rotation hands the caller the key's powers.
 * A key whose owner is gone has no account to protect; its capabilities are still checked.
 */
export async function assertKeyInReach(ctx: OperationContext, key: ApiKeyDoc, granter: Granter): Promise<void> {
  assertWithinCeiling(key.capabilities, granter);
  const owner = await accessCollections(ctx.db).users.findOne({ _id: key.ownerId, siteId: key.siteId });
  if (owner) await assertAccountInReach(ctx, owner, granter);
}

/** The capabilities an account would hold with this role and policy (its operator flag unchanged). */
export async function capabilitiesWith(db: Db, siteId: string, role: string, policy: Policy, platformOperator: boolean): Promise<Set<Capability>> {
  return effectiveCapabilities(await roleCapabilities(db, siteId, role), policy, platformOperator);
}

/**
 * Changing a custom role's capabilities changes every account holding it, so each holder must be
 * within reach: a site administrator cannot rewrite a role an operator holds.
 */
export async function assertRoleHoldersInReach(ctx: OperationContext, roleId: string): Promise<void> {
  const holders = accessCollections(ctx.db).users.find({ siteId: ctx.site._id, role: roleId });
  for await (const holder of holders) await assertAccountInReach(ctx, holder);
}
