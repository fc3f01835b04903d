import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { newId } from '../core/ids.ts';
import { BadRequestError, NotFoundError } from '../core/errors.ts';
import { accessChanged } from './access-change.ts';
import { withinCountQuota } from '../tenancy/quota-guard.ts';
import { CapabilitySchema, type Capability } from '../core/capabilities.ts';
import { accessCollections, type ApiKeyDoc } from './model.ts';
import { issueSecret } from './key-secrets.ts';
import { isValidIpRule, normalizeOrigin } from './ip-rules.ts';
import { assertKeyInReach, assertWithinCeiling, type Granter } from './grant-ceiling.ts';

export const KeyScopeSchema = z
  .object({
    types: z.array(z.string().min(1).max(100)).max(100).optional(),
    locales: z.array(z.string().min(1).max(35)).max(100).optional(),
    ownOnly: z.boolean().optional(),
  })
  .strict();

const IpRule = z.string().refine(isValidIpRule, 'must be an IP address or CIDR range');
const OriginRule = z.string().transform((value, zctx) => {
  const origin = normalizeOrigin(value);
  if (!origin) zctx.addIssue({ code: 'custom', message: 'must be an http(s) origin' });
  return origin ?? '';
});

export const KeyFieldsSchema = z.object({
  name: z.string().trim().min(1).max(200),
  capabilities: z.array(CapabilitySchema).min(1).max(50),
  scope: KeyScopeSchema.optional(),
  allowedIps: z.array(IpRule).max(100).optional(),
  allowedOrigins: z.array(OriginRule).max(100).optional(),
  expiresAt: z.iso.datetime({ offset: true }).nullable().optional(),
  rateLimitPerMin: z.number().int().min(1).max(100_000).nullable().optional(),
});
export type KeyFields = z.output<typeof KeyFieldsSchema>;

export const KeyRecordView = z.object({
  id: z.string(),
  name: z.string(),
  capabilities: z.array(CapabilitySchema),
  scope: KeyScopeSchema,
  allowedIps: z.array(z.string()),
  allowedOrigins: z.array(z.string()),
  expiresAt: z.string().nullable(),
  rateLimitPerMin: z.number().nullable(),
  status: z.enum(['active', 'revoked', 'expired']),
  ownerId: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  rotatedAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
});

/** The record as listed: never the secret, its hash or its lookup part. */
export function toKeyRecord(key: ApiKeyDoc, now: Date): z.input<typeof KeyRecordView> {
  const expired = key.expiresAt !== null && key.expiresAt.getTime() <= now.getTime();
  return {
    id: key._id,
    name: key.name,
    capabilities: key.capabilities,
    scope: key.scope,
    allowedIps: key.allowedIps,
    allowedOrigins: key.allowedOrigins,
    expiresAt: key.expiresAt?.toISOString() ?? null,
    rateLimitPerMin: key.rateLimitPerMin,
    status: key.status === 'revoked' ? 'revoked' : expired ? 'expired' : 'active',
    ownerId: key.ownerId,
    createdAt: key.createdAt.toISOString(),
    updatedAt: key.updatedAt.toISOString(),
    rotatedAt: key.rotatedAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
  };
}

export async function createKey(
  ctx: OperationContext,
  owner: { userId: string; capabilities: ReadonlySet<Capability> },
  fields: KeyFields,
): Promise<{ key: string; record: ApiKeyDoc }> {
  // A key never gets a capability its creator lacks at this moment.
  assertWithinCeiling(fields.capabilities, owner);
  const now = ctx.services.clock.now();
  const secret = issueSecret();
  const record: ApiKeyDoc = {
    _id: newId(now.getTime()),
    siteId: ctx.site._id,
    name: fields.name,
    lookup: secret.lookup,
    secretHash: secret.secretHash,
    ownerId: owner.userId,
    capabilities: [...new Set(fields.capabilities)],
    scope: fields.scope ?? {},
    allowedIps: fields.allowedIps ?? [],
    allowedOrigins: fields.allowedOrigins ?? [],
    expiresAt: fields.expiresAt ? new Date(fields.expiresAt) : null,
    rateLimitPerMin: fields.rateLimitPerMin ?? null,
    status: 'active',
    createdAt: now,
    updatedAt: now,
    rotatedAt: null,
    revokedAt: null,
  };
  const { apiKeys } = accessCollections(ctx.db);
  // Revoked keys stay listed but no longer count against the quota.
  const active = (siteId: string | null, bound: number) =>
    apiKeys.countDocuments(siteId ? { siteId, status: 'active' } : { status: 'active' }, { limit: bound });
  await withinCountQuota(ctx, 'apiKeys', active, () => apiKeys.insertOne(record));
  return { key: secret.key, record };
}

export async function findKey(ctx: OperationContext, id: string): Promise<ApiKeyDoc> {
  const key = await accessCollections(ctx.db).apiKeys.findOne({ _id: id, siteId: ctx.site._id });
  if (!key) throw new NotFoundError();
  return key;
}

/** Who acts on a key: the user recorded in the audit row and the principal held to the ceiling. */
export type KeyActor = { userId: string } & Granter;

/** The key as it stands, once the actor is allowed to act on it (grant-ceiling.ts). */
async function keyInReach(ctx: OperationContext, id: string, actor: KeyActor): Promise<ApiKeyDoc> {
  const key = await findKey(ctx, id);
  await assertKeyInReach(ctx, key, actor);
  return key;
}

export async function updateKey(ctx: OperationContext, id: string, editor: KeyActor, patch: Partial<KeyFields>): Promise<ApiKeyDoc> {
  await keyInReach(ctx, id, editor);
  if (patch.capabilities) assertWithinCeiling(patch.capabilities, editor);
  const now = ctx.services.clock.now();
  const $set: Partial<ApiKeyDoc> = { updatedAt: now };
  if (patch.name !== undefined) $set.name = patch.name;
  if (patch.capabilities) $set.capabilities = [...new Set(patch.capabilities)];
  if (patch.scope) $set.scope = patch.scope;
  if (patch.allowedIps) $set.allowedIps = patch.allowedIps;
  if (patch.allowedOrigins) $set.allowedOrigins = patch.allowedOrigins;
  if (patch.expiresAt !== undefined) $set.expiresAt = patch.expiresAt ? new Date(patch.expiresAt) : null;
  if (patch.rateLimitPerMin !== undefined) $set.rateLimitPerMin = patch.rateLimitPerMin;
  const key = await accessCollections(ctx.db).apiKeys.findOneAndUpdate({ _id: id, siteId: ctx.site._id }, { $set }, { returnDocument: 'after' });
  if (!key) throw new NotFoundError();
  await accessChanged(ctx);
  return key;
}

/** A new secret (and lookup); the old one fails on the next request on every gateway. */
export async function rotateKey(ctx: OperationContext, id: string, actor: KeyActor): Promise<{ key: string; record: ApiKeyDoc }> {
  const current = await keyInReach(ctx, id, actor);
  const now = ctx.services.clock.now();
  const secret = issueSecret();
  const record = await accessCollections(ctx.db).apiKeys.findOneAndUpdate(
    // Only the key as checked: capabilities raised meanwhile are not handed over.
    { _id: id, siteId: ctx.site._id, status: 'active', capabilities: current.capabilities },
    { $set: { lookup: secret.lookup, secretHash: secret.secretHash, rotatedAt: now, updatedAt: now } },
    { returnDocument: 'after' },
  );
  if (!record) throw new NotFoundError();
  await accessChanged(ctx);
  return { key: secret.key, record };
}

export async function revokeKey(ctx: OperationContext, id: string, actor: KeyActor): Promise<ApiKeyDoc> {
  await keyInReach(ctx, id, actor);
  const now = ctx.services.clock.now();
  const record = await accessCollections(ctx.db).apiKeys.findOneAndUpdate(
    { _id: id, siteId: ctx.site._id },
    { $set: { status: 'revoked', revokedAt: now, updatedAt: now } },
    { returnDocument: 'after' },
  );
  if (!record) throw new NotFoundError();
  await accessChanged(ctx);
  return record;
}

export async function deleteKey(ctx: OperationContext, id: string, actor: KeyActor): Promise<void> {
  await keyInReach(ctx, id, actor);
  const deleted = await accessCollections(ctx.db).apiKeys.findOneAndDelete({ _id: id, siteId: ctx.site._id });
  if (!deleted) throw new NotFoundError();
  await accessChanged(ctx);
}

export function assertKeyPatchNotEmpty(patch: object): void {
  if (Object.keys(patch).length === 0) throw new BadRequestError('Nothing to change');
}
