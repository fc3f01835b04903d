import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { NotFoundError } from '../core/errors.ts';
import { accessCollections } from './model.ts';
import { createUser, deleteUser, NewUserSchema, toUserView, updateUser, UserPatchSchema, UserView } from './users.ts';
import { pageById, pageEnvelope, PageQuery } from '../core/paging.ts';

const IdInput = z.object({ id: z.string().min(1).max(64) });

export const listUsersOp = defineOperation({
  id: 'users.list',
  surface: 'manage',
  method: 'GET',
  path: '/users',
  summary: 'Users with their effective access',
  requires: 'users:read',
  input: z.object(PageQuery),
  output: pageEnvelope(UserView),
  async handler(ctx, query) {
    const { rows, page } = await pageById(ctx, 'users', accessCollections(ctx.db).users, { siteId: ctx.site._id }, query);
    return { data: await Promise.all(rows.map((row) => toUserView(ctx, row))), page };
  },
});

export const getUserOp = defineOperation({
  id: 'users.get',
  surface: 'manage',
  method: 'GET',
  path: '/users/:id',
  summary: 'One user with effective access',
  requires: 'users:read',
  input: IdInput,
  output: UserView,
  async handler(ctx, { id }) {
    const user = await accessCollections(ctx.db).users.findOne({ _id: id, siteId: ctx.site._id });
    if (!user) throw new NotFoundError();
    return toUserView(ctx, user);
  },
});

export const createUserOp = defineOperation({
  id: 'users.create',
  surface: 'manage',
  method: 'POST',
  path: '/users',
  summary: 'Create a user (password hashed with scrypt)',
  description: "The user's effective capabilities (role ∪ policy.grant − policy.deny) must all be held by the caller (403 otherwise, nothing created).",
  requires: 'users:manage',
  errors: [409],
  status: 201,
  events: ['user.created'],
  input: NewUserSchema,
  output: UserView,
  async handler(ctx, input) {
    const user = await createUser(ctx, input);
    await ctx.emit('user.created', { id: user._id, email: user.email, role: user.role });
    return toUserView(ctx, user);
  },
});

export const updateUserOp = defineOperation({
  id: 'users.update',
  surface: 'manage',
  method: 'PATCH',
  path: '/users/:id',
  summary: "Change role, policy, display name, password or disabled; narrows the user's keys at once",
  description:
    "The caller must hold every capability the user holds now and every one the change would give (403 otherwise, nothing changed), so a site role never changes a platform operator. A new password ends the user's sessions and OAuth grants; `disabled: true` ends the sessions at once and stops the user's keys and OAuth grants (the last enabled platform operator cannot be disabled: 409).",
  requires: 'users:manage',
  errors: [409],
  events: ['user.updated'],
  input: UserPatchSchema.extend(IdInput.shape),
  output: UserView,
  async handler(ctx, { id, ...patch }) {
    const user = await updateUser(ctx, id, patch);
    await ctx.emit('user.updated', { id: user._id, email: user.email, role: user.role });
    return toUserView(ctx, user);
  },
});

export const deleteUserOp = defineOperation({
  id: 'users.delete',
  surface: 'manage',
  method: 'DELETE',
  path: '/users/:id',
  summary: 'Delete a user; their sessions end and their keys stop working',
  description: 'The caller must hold every capability the user holds (403 otherwise). The last platform operator cannot be deleted (409, nothing changes).',
  requires: 'users:manage',
  errors: [409],
  events: ['user.deleted'],
  input: IdInput,
  output: z.object({ id: z.string(), deleted: z.literal(true) }),
  async handler(ctx, { id }) {
    await deleteUser(ctx, id);
    await ctx.emit('user.deleted', { id });
    return { id, deleted: true as const };
  },
});

export const userOperations = [listUsersOp, getUserOp, createUserOp, updateUserOp, deleteUserOp];
