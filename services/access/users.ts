import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { newId } from '../core/ids.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../core/errors.ts';
import { accessChanged } from './access-change.ts';
import { withinCountQuota } from '../tenancy/quota-guard.ts';
import { CapabilitySchema, WorkspaceCapabilitySchema } from '../core/capabilities.ts';
import { accessCollections, type UserDoc } from './model.ts';
import { hasTwoFactor } from './two-factor.ts';
import { hashPassword } from './passwords.ts';
import { isBuiltInRole } from './roles.ts';
import { accessOfUser } from './user-access.ts';
import { assertAccountInReach, assertWithinCeiling, capabilitiesWith } from './grant-ceiling.ts';
import { recordChange } from '../audit/record.ts';

export const PolicySchema = z
  .object({ grant: z.array(WorkspaceCapabilitySchema).max(50).optional(), deny: z.array(WorkspaceCapabilitySchema).max(50).optional() })
  .strict();

export const UserView = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  role: z.string(),
  policy: PolicySchema,
  platformOperator: z.boolean(),
  disabled: z.boolean(),
  twoFactor: z.boolean(),
  effectiveCapabilities: z.array(CapabilitySchema),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const NewUserSchema = z
  .object({
    email: z.email().max(254),
    name: z.string().trim().min(1).max(200).optional(),
    password: z.string().min(12).max(512),
    role: z.string().min(1).max(64).default('viewer'),
    policy: PolicySchema.default({}),
  })
  .strict();

export const UserPatchSchema = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    role: z.string().min(1).max(64).optional(),
    policy: PolicySchema.optional(),
    password: z.string().min(12).max(512).optional(),
    /** A disabled account signs in nowhere; its sessions end at once, its keys and OAuth grants stop. */
    disabled: z.boolean().optional(),
  })
  .strict();

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

export async function toUserView(ctx: OperationContext, user: UserDoc): Promise<z.input<typeof UserView>> {
  const access = await accessOfUser(ctx.db, user);
  return {
    id: user._id,
    email: user.email,
    name: user.name,
    role: user.role,
    policy: user.policy,
    platformOperator: user.platformOperator,
    disabled: user.disabled === true,
    twoFactor: hasTwoFactor(user),
    effectiveCapabilities: [...access.capabilities].sort(),
    createdAt: user.createdAt.toISOString(),
    updatedAt: user.updatedAt.toISOString(),
  };
}

export async function assertRoleExists(ctx: OperationContext, role: string): Promise<void> {
  if (isBuiltInRole(role)) return;
  const found = await accessCollections(ctx.db).roles.countDocuments({ _id: role, siteId: ctx.site._id }, { limit: 1 });
  if (!found) throw new BadRequestError('role: unknown role');
}

export async function createUser(
  ctx: OperationContext,
  input: Omit<z.output<typeof NewUserSchema>, 'password'> & ({ password: string } | { passwordHash: string }) & { platformOperator?: boolean },
): Promise<UserDoc> {
  await assertRoleExists(ctx, input.role);
  // The account's capabilities are a grant: never beyond what the caller holds (grant-ceiling.ts).
  assertWithinCeiling(await capabilitiesWith(ctx.db, ctx.site._id, input.role, input.policy, input.platformOperator ?? false), ctx.principal);
  const now = ctx.services.clock.now();
  const user: UserDoc = {
    _id: newId(),
    siteId: ctx.site._id,
    email: normalizeEmail(input.email),
    name: input.name ?? input.email.split('@')[0],
    role: input.role,
    policy: input.policy,
    platformOperator: input.platformOperator ?? false,
    // Workspace provisioning hashes at request time, so no password travels through Temporal.
    passwordHash: 'passwordHash' in input ? input.passwordHash : await hashPassword(input.password),
    createdAt: now,
    updatedAt: now,
  };
  const { users } = accessCollections(ctx.db);
  try {
    await withinCountQuota(
      ctx,
      'users',
      (siteId, bound) => users.countDocuments(siteId ? { siteId } : {}, { limit: bound }),
      () => users.insertOne(user),
    );
  } catch (error) {
    if ((error as { code?: number }).code === 11000) throw new ConflictError('A user with this email exists');
    throw error;
  }
  return user;
}

export async function updateUser(ctx: OperationContext, id: string, patch: z.output<typeof UserPatchSchema>, attempt = 0): Promise<UserDoc> {
  if (patch.role) await assertRoleExists(ctx, patch.role);
  const { users } = accessCollections(ctx.db);
  const current = await users.findOne({ _id: id, siteId: ctx.site._id });
  if (!current) throw new NotFoundError();
  // The account as it is must be within the caller's reach, and as it will be within the ceiling.
  await assertAccountInReach(ctx, current);
  const after = await capabilitiesWith(ctx.db, ctx.site._id, patch.role ?? current.role, patch.policy ?? current.policy, current.platformOperator);
  assertWithinCeiling(after, ctx.principal);
  // The last platform operator who can sign in stays able to (docs/platform.md).
  if (patch.disabled && current.platformOperator && !current.disabled) {
    const others = await users.countDocuments({ siteId: ctx.site._id, platformOperator: true, disabled: { $ne: true }, _id: { $ne: id } }, { limit: 1 });
    if (others === 0) throw new ConflictError('The last platform operator cannot be disabled');
  }
  const { password, ...rest } = patch;
  const now = ctx.services.clock.now();
  const $set: Partial<UserDoc> = { ...rest, updatedAt: now };
  if (password) $set.passwordHash = await hashPassword(password);
  // Written only if the operator flag is still the one checked; if it moved meanwhile, check again.
  const user = await users.findOneAndUpdate(
    { _id: id, siteId: ctx.site._id, platformOperator: current.platformOperator },
    { $set },
    { returnDocument: 'after' },
  );
  if (!user) {
    if (attempt < 2) return updateUser(ctx, id, patch, attempt + 1);
    throw new NotFoundError();
  }
  if (password) await endCredentialsAfterPasswordChange(ctx, id, now);
  // Disabling ends every session at once; keys and OAuth grants stop with the account (user-access.ts).
  if (patch.disabled) await accessCollections(ctx.db).sessions.deleteMany({ siteId: ctx.site._id, userId: id });
  if (patch.disabled !== undefined && patch.disabled !== (current.disabled === true)) {
    recordChange(ctx, {
      action: 'users.update',
      target: { kind: 'users', id },
      summary: { changes: { disabled: { from: current.disabled === true, to: patch.disabled } } },
    });
  }
  // Narrowing a role or policy must narrow the user's keys on the next request.
  await accessChanged(ctx);
  if (patch.role && patch.role !== current.role) {
    recordChange(ctx, { action: 'users.update', target: { kind: 'users', id }, summary: { changes: { role: { from: current.role, to: patch.role } } } });
  }
  return user;
}

/**
 * A new password ends what the old one opened: every session of the account (but the caller's own
 * when users change their own password through a session) and every OAuth grant, so its access and
 * refresh tokens stop on their next use. API keys are credentials of their own and stay.
 */
export async function endCredentialsAfterPasswordChange(ctx: OperationContext, userId: string, now: Date): Promise<void> {
  const { principal } = ctx;
  const keep = principal.kind === 'user' && principal.userId === userId ? principal.sessionId : undefined;
  await accessCollections(ctx.db).sessions.deleteMany({ siteId: ctx.site._id, userId, ...(keep ? { _id: { $ne: keep } } : {}) });
  // OAuth grants belong to the oauth feature, which sits above access (Feature.userPasswordChanged).
  for (const feature of ctx.services.features) await feature.userPasswordChanged?.(ctx, userId, now);
}

export async function deleteUser(ctx: OperationContext, id: string, attempt = 0): Promise<void> {
  const { users, sessions } = accessCollections(ctx.db);
  const target = await users.findOne({ _id: id, siteId: ctx.site._id });
  if (!target) throw new NotFoundError();
  await assertAccountInReach(ctx, target);
  const deleted = await users.findOneAndDelete({ _id: id, siteId: ctx.site._id, platformOperator: target.platformOperator });
  if (!deleted) {
    // Gone, or its operator flag moved since the check: the account as it is now decides.
    if (attempt < 2) return deleteUser(ctx, id, attempt + 1);
    throw new NotFoundError();
  }
  // The last platform operator stays (docs/platform.md): checked after the write and undone, the
  // same way as revoking the flag, so two racing removals of the last two leave one.
  if (deleted.platformOperator && (await users.countDocuments({ siteId: ctx.site._id, platformOperator: true }, { limit: 1 })) === 0) {
    await users.insertOne(deleted);
    throw new ConflictError('The last platform operator cannot be removed');
  }
  await sessions.deleteMany({ siteId: ctx.site._id, userId: id });
  await accessChanged(ctx);
}

export async function findUserByEmail(ctx: Pick<OperationContext, 'db' | 'site'>, email: string): Promise<UserDoc | null> {
  return accessCollections(ctx.db).users.findOne({ siteId: ctx.site._id, email: normalizeEmail(email) });
}
