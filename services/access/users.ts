import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { newId } from '../core/ids.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../core/errors.ts';
import { accessChanged } from './access-change.ts';
import { withinCountQuota } from '../platform/quota-guard.ts';
import { CapabilitySchema, WorkspaceCapabilitySchema } from '../core/capabilities.ts';
import { accessCollections, type UserDoc } from './model.ts';
import { hashPassword } from './passwords.ts';
import { isBuiltInRole } from './roles.ts';
import { accessOfUser } from './user-access.ts';

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
    await withinCountQuota(ctx, 'users', (siteId) => users.countDocuments(siteId ? { siteId } : {}), () => users.insertOne(user));
  } catch (error) {
    if ((error as { code?: number }).code === 11000) throw new ConflictError('A user with this email exists');
    throw error;
  }
  return user;
}

export async function updateUser(ctx: OperationContext, id: string, patch: z.output<typeof UserPatchSchema>): Promise<UserDoc> {
  if (patch.role) await assertRoleExists(ctx, patch.role);
  const { password, ...rest } = patch;
  const $set: Partial<UserDoc> = { ...rest, updatedAt: ctx.services.clock.now() };
  if (password) $set.passwordHash = await hashPassword(password);
  const user = await accessCollections(ctx.db).users.findOneAndUpdate(
    { _id: id, siteId: ctx.site._id },
    { $set },
    { returnDocument: 'after' },
  );
  if (!user) throw new NotFoundError();
  // Narrowing a role or policy must narrow the user's keys on the next request.
  await accessChanged(ctx);
  return user;
}

export async function deleteUser(ctx: OperationContext, id: string): Promise<void> {
  const { users, sessions } = accessCollections(ctx.db);
  const deleted = await users.findOneAndDelete({ _id: id, siteId: ctx.site._id });
  if (!deleted) throw new NotFoundError();
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
