import { z } from 'zod';
import { ListQuery, pageEnvelope, pageInOrder } from '../core/paging.ts';
import { defineOperation } from '../core/operation.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { accessChanged } from './access-change.ts';
import { CapabilitySchema, WorkspaceCapabilitySchema } from '../core/capabilities.ts';
import { accessCollections, type RoleDoc } from './model.ts';
import { BUILT_IN_ROLES, isBuiltInRole } from './roles.ts';
import { assertRoleHoldersInReach, assertWithinCeiling } from './grant-ceiling.ts';

const RoleView = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  builtin: z.boolean(),
  capabilities: z.array(CapabilitySchema),
});
const IdInput = z.object({ id: z.string().min(1).max(64) });
const RoleFields = z.object({
  name: z.string().trim().min(1).max(100),
  description: z.string().max(500).default(''),
  capabilities: z.array(WorkspaceCapabilitySchema).max(50),
});

const builtInViews = () =>
  Object.entries(BUILT_IN_ROLES).map(([id, role]) => ({ id, name: role.name, description: '', builtin: true, capabilities: [...role.capabilities] }));
const customView = (role: RoleDoc) => ({ id: role._id, name: role.name, description: role.description, builtin: false, capabilities: role.capabilities });

const duplicate = (error: unknown) => {
  if ((error as { code?: number }).code === 11000) throw new ConflictError('A role with this name exists');
  throw error;
};

function refuseBuiltIn(id: string) {
  if (isBuiltInRole(id)) throw new BadRequestError('Built-in roles cannot be changed');
}

export const listRolesOp = defineOperation({
  id: 'roles.list',
  surface: 'manage',
  method: 'GET',
  path: '/roles',
  summary: 'Built-in and custom roles',
  requires: 'users:read',
  input: ListQuery,
  output: pageEnvelope(RoleView),
  async handler(ctx, query) {
    const custom = await accessCollections(ctx.db).roles.find({ siteId: ctx.site._id }).sort({ _id: 1 }).toArray();
    const { items, page } = pageInOrder(ctx, 'roles', [...builtInViews(), ...custom.map(customView)], (role) => role.id, query);
    return { data: items, page };
  },
});

export const getRoleOp = defineOperation({
  id: 'roles.get',
  surface: 'manage',
  method: 'GET',
  path: '/roles/:id',
  summary: 'One role',
  requires: 'users:read',
  input: IdInput,
  output: RoleView,
  async handler(ctx, { id }) {
    const builtIn = builtInViews().find((role) => role.id === id);
    if (builtIn) return builtIn;
    const role = await accessCollections(ctx.db).roles.findOne({ _id: id, siteId: ctx.site._id });
    if (!role) throw new NotFoundError();
    return customView(role);
  },
});

export const createRoleOp = defineOperation({
  id: 'roles.create',
  surface: 'manage',
  method: 'POST',
  path: '/roles',
  summary: 'Create a custom role',
  description: 'Its capabilities must all be held by the caller (403 otherwise, nothing created).',
  requires: 'users:manage',
  errors: [409],
  status: 201,
  input: RoleFields.strict(),
  output: RoleView,
  async handler(ctx, input) {
    assertWithinCeiling(input.capabilities, ctx.principal);
    const now = ctx.services.clock.now();
    const role: RoleDoc = { _id: newId(), siteId: ctx.site._id, ...input, createdAt: now, updatedAt: now };
    await accessCollections(ctx.db).roles.insertOne(role).catch(duplicate);
    return customView(role);
  },
});

export const updateRoleOp = defineOperation({
  id: 'roles.update',
  surface: 'manage',
  method: 'PATCH',
  path: '/roles/:id',
  summary: 'Change a custom role; its users (and their keys) change on the next request',
  description: 'New capabilities must all be held by the caller, and so must every capability of each user holding the role (403 otherwise, nothing changed).',
  requires: 'users:manage',
  errors: [409],
  input: RoleFields.partial().extend(IdInput.shape).strict(),
  output: RoleView,
  async handler(ctx, { id, ...patch }) {
    refuseBuiltIn(id);
    if (patch.capabilities) {
      assertWithinCeiling(patch.capabilities, ctx.principal);
      await assertRoleHoldersInReach(ctx, id);
    }
    const role = await accessCollections(ctx.db)
      .roles.findOneAndUpdate({ _id: id, siteId: ctx.site._id }, { $set: { ...patch, updatedAt: ctx.services.clock.now() } }, { returnDocument: 'after' })
      .catch(duplicate);
    if (!role) throw new NotFoundError();
    await accessChanged(ctx);
    return customView(role);
  },
});

export const deleteRoleOp = defineOperation({
  id: 'roles.delete',
  surface: 'manage',
  method: 'DELETE',
  path: '/roles/:id',
  summary: 'Delete a custom role that no user holds',
  requires: 'users:manage',
  errors: [409],
  input: IdInput,
  output: z.object({ id: z.string(), deleted: z.literal(true) }),
  async handler(ctx, { id }) {
    refuseBuiltIn(id);
    const { roles, users } = accessCollections(ctx.db);
    if (await users.countDocuments({ siteId: ctx.site._id, role: id }, { limit: 1 })) throw new ConflictError('Role is in use');
    const deleted = await roles.findOneAndDelete({ _id: id, siteId: ctx.site._id });
    if (!deleted) throw new NotFoundError();
    await accessChanged(ctx);
    return { id, deleted: true as const };
  },
});

export const roleOperations = [listRolesOp, getRoleOp, createRoleOp, updateRoleOp, deleteRoleOp];
