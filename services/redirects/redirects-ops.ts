import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import type { OperationContext } from '../core/context.ts';
import { ConflictError, NotFoundError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { isDuplicateKey } from '../core/mongo-errors.ts';
import { PageQuery, pageById, pageEnvelope } from '../core/paging.ts';
import { assertNoLoop, RedirectBody, redirectsCollection, RedirectView, toRedirectView, type RedirectDoc } from './redirects.ts';

const duplicate = () => new ConflictError('A redirect from this path exists');

async function requireRedirect(ctx: OperationContext, id: string): Promise<RedirectDoc> {
  const doc = await redirectsCollection(ctx).findOne({ siteId: ctx.site._id, _id: id });
  if (!doc) throw new NotFoundError('Redirect not found');
  return doc;
}

export const listRedirectsOp = defineOperation({
  id: 'redirects.list',
  surface: 'manage',
  method: 'GET',
  path: '/redirects',
  summary: 'Managed redirect rules, oldest first',
  requires: 'settings:read',
  input: z.object(PageQuery),
  output: pageEnvelope(RedirectView),
  async handler(ctx, query) {
    const { rows, page } = await pageById(ctx, `redirects:${ctx.site._id}`, redirectsCollection(ctx), { siteId: ctx.site._id }, query);
    return { data: rows.map(toRedirectView), page };
  },
});

export const getRedirectOp = defineOperation({
  id: 'redirects.get',
  surface: 'manage',
  method: 'GET',
  path: '/redirects/:id',
  summary: 'One redirect rule',
  requires: 'settings:read',
  input: z.object({ id: z.string() }),
  output: RedirectView,
  async handler(ctx, { id }) {
    return toRedirectView(await requireRedirect(ctx, id));
  },
});

export const createRedirectOp = defineOperation({
  id: 'redirects.create',
  surface: 'manage',
  method: 'POST',
  path: '/redirects',
  summary: 'Add a redirect rule (400 on a loop, 409 on a duplicate `from`)',
  requires: 'settings:manage',
  errors: [409],
  status: 201,
  input: RedirectBody,
  output: RedirectView,
  async handler(ctx, body) {
    await assertNoLoop(ctx, body);
    // The unique index decides races; this check also covers a workspace created before the index existed.
    if (await redirectsCollection(ctx).findOne({ siteId: ctx.site._id, from: body.from })) throw duplicate();
    const now = ctx.services.clock.now();
    const doc: RedirectDoc = { _id: newId(), siteId: ctx.site._id, ...body, createdAt: now, updatedAt: now };
    try {
      await redirectsCollection(ctx).insertOne(doc);
    } catch (error) {
      if (isDuplicateKey(error)) throw duplicate();
      throw error;
    }
    // The public lookup is cached per content generation.
    return toRedirectView(doc);
  },
});

export const replaceRedirectOp = defineOperation({
  id: 'redirects.replace',
  surface: 'manage',
  method: 'PUT',
  path: '/redirects/:id',
  summary: 'Replace a redirect rule',
  requires: 'settings:manage',
  errors: [409],
  input: RedirectBody.extend({ id: z.string() }),
  output: RedirectView,
  async handler(ctx, { id, ...body }) {
    await requireRedirect(ctx, id);
    await assertNoLoop(ctx, body, id);
    if (await redirectsCollection(ctx).findOne({ siteId: ctx.site._id, from: body.from, _id: { $ne: id } })) throw duplicate();
    try {
      const doc = await redirectsCollection(ctx).findOneAndUpdate(
        { siteId: ctx.site._id, _id: id },
        { $set: { ...body, updatedAt: ctx.services.clock.now() } },
        { returnDocument: 'after' },
      );
      if (!doc) throw new NotFoundError('Redirect not found');
      return toRedirectView(doc);
    } catch (error) {
      if (isDuplicateKey(error)) throw duplicate();
      throw error;
    }
  },
});

export const deleteRedirectOp = defineOperation({
  id: 'redirects.delete',
  surface: 'manage',
  method: 'DELETE',
  path: '/redirects/:id',
  summary: 'Remove a redirect rule (an addition to the contract table)',
  requires: 'settings:manage',
  input: z.object({ id: z.string() }),
  output: z.object({ id: z.string(), deleted: z.boolean() }),
  async handler(ctx, { id }) {
    const { deletedCount } = await redirectsCollection(ctx).deleteOne({ siteId: ctx.site._id, _id: id });
    if (!deletedCount) throw new NotFoundError('Redirect not found');
    return { id, deleted: true };
  },
});
