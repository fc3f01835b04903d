import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { defineOperation } from '../core/operation.ts';
import { UnauthorizedError } from '../core/errors.ts';
import { CapabilitySchema, type Capability } from '../core/capabilities.ts';
import { accessCollections } from './model.ts';
import { assertKeyPatchNotEmpty, createKey, deleteKey, KeyFieldsSchema, KeyRecordView, revokeKey, rotateKey, toKeyRecord, updateKey } from './keys.ts';
import { pageById, pageEnvelope, PageQuery } from '../core/paging.ts';

/** Key administration is done by a signed-in user (cookie session) holding `site:admin`. */
function sessionUser(ctx: OperationContext): { userId: string; capabilities: ReadonlySet<Capability> } {
  if (ctx.principal.kind !== 'user') throw new UnauthorizedError();
  return { userId: ctx.principal.userId, capabilities: ctx.principal.capabilities };
}

const KEY_IN_REACH =
  "The caller must hold every capability of the key and of its owner (403 otherwise, nothing changed): a site administrator never acts on a platform operator's key.";
const Issued = z.object({ key: z.string(), record: KeyRecordView });
const IdInput = z.object({ id: z.string().min(1).max(64) });

export const createApiKeyOp = defineOperation({
  id: 'apiKeys.create',
  surface: 'admin',
  method: 'POST',
  path: '/api-keys',
  summary: 'Create an API key; the secret is returned once',
  // The audit row keeps the name key rows always had.
  audit: { action: 'key.created' },
  requires: 'site:admin',
  status: 201,
  input: KeyFieldsSchema.strict(),
  output: Issued,
  async handler(ctx, input) {
    const { key, record } = await createKey(ctx, sessionUser(ctx), input);
    return { key, record: toKeyRecord(record, ctx.services.clock.now()) };
  },
});

export const listApiKeysOp = defineOperation({
  id: 'apiKeys.list',
  surface: 'admin',
  method: 'GET',
  path: '/api-keys',
  summary: 'List API keys (never a secret or its hash)',
  requires: 'site:admin',
  input: z.object(PageQuery),
  output: pageEnvelope(KeyRecordView),
  async handler(ctx, query) {
    const { rows, page } = await pageById(ctx, 'api-keys', accessCollections(ctx.db).apiKeys, { siteId: ctx.site._id }, query);
    const now = ctx.services.clock.now();
    return { data: rows.map((row) => toKeyRecord(row, now)), page };
  },
});

export const grantableCapabilitiesOp = defineOperation({
  id: 'apiKeys.capabilities',
  surface: 'admin',
  method: 'GET',
  path: '/api-keys/capabilities',
  summary: 'The capabilities the caller may grant to a key',
  requires: 'site:admin',
  input: z.object({}),
  output: z.object({ capabilities: z.array(CapabilitySchema) }),
  async handler(ctx) {
    return { capabilities: [...sessionUser(ctx).capabilities].sort() };
  },
});

export const updateApiKeyOp = defineOperation({
  id: 'apiKeys.update',
  surface: 'admin',
  method: 'PATCH',
  path: '/api-keys/:id',
  summary: 'Rename, re-scope, change capabilities, IPs, origins, expiry or rate limit',
  description: KEY_IN_REACH,
  audit: { action: 'key.updated' },
  requires: 'site:admin',
  input: KeyFieldsSchema.partial().extend(IdInput.shape).strict(),
  output: z.object({ record: KeyRecordView }),
  async handler(ctx, { id, ...patch }) {
    assertKeyPatchNotEmpty(patch);
    const record = await updateKey(ctx, id, sessionUser(ctx), patch);
    return { record: toKeyRecord(record, ctx.services.clock.now()) };
  },
});

export const rotateApiKeyOp = defineOperation({
  id: 'apiKeys.rotate',
  surface: 'admin',
  method: 'POST',
  path: '/api-keys/:id/rotate',
  summary: 'Issue a new secret (shown once); the old one stops working',
  description: KEY_IN_REACH,
  audit: { action: 'key.rotated' },
  requires: 'site:admin',
  input: IdInput,
  output: Issued,
  async handler(ctx, { id }) {
    const { key, record } = await rotateKey(ctx, id, sessionUser(ctx));
    return { key, record: toKeyRecord(record, ctx.services.clock.now()) };
  },
});

export const revokeApiKeyOp = defineOperation({
  id: 'apiKeys.revoke',
  surface: 'admin',
  method: 'POST',
  path: '/api-keys/:id/revoke',
  summary: 'Cut a key off immediately',
  description: KEY_IN_REACH,
  audit: { action: 'key.revoked' },
  requires: 'site:admin',
  input: IdInput,
  output: z.object({ record: KeyRecordView }),
  async handler(ctx, { id }) {
    const record = await revokeKey(ctx, id, sessionUser(ctx));
    return { record: toKeyRecord(record, ctx.services.clock.now()) };
  },
});

export const deleteApiKeyOp = defineOperation({
  id: 'apiKeys.delete',
  surface: 'admin',
  method: 'DELETE',
  path: '/api-keys/:id',
  summary: 'Remove a key',
  description: KEY_IN_REACH,
  audit: { action: 'key.deleted' },
  requires: 'site:admin',
  status: 204,
  input: IdInput,
  output: z.void(),
  async handler(ctx, { id }) {
    await deleteKey(ctx, id, sessionUser(ctx));
  },
});

export const keyOperations = [createApiKeyOp, listApiKeysOp, grantableCapabilitiesOp, updateApiKeyOp, rotateApiKeyOp, revokeApiKeyOp, deleteApiKeyOp];
