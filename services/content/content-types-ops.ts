import { z } from 'zod';
import { ListQuery, pageEnvelope, pageInOrder } from '../core/paging.ts';
import { defineOperation } from '../core/operation.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../core/errors.ts';
import { isDuplicateKey } from '../core/mongo-errors.ts';
import { ContentTypeView, findContentType, isBuiltinType, listContentTypes } from './content-types.ts';
import { contentCollections, FieldDefinitionSchema } from './model.ts';
import { newId } from '../core/ids.ts';

const typeSlug = z.string().regex(/^[a-z][a-z0-9-]{0,63}$/, 'lower-case letters, digits and - only');

const FieldsSchema = z
  .array(FieldDefinitionSchema)
  .max(100)
  .refine((fields) => new Set(fields.map((f) => f.name)).size === fields.length, 'field names must be unique')
  .refine((fields) => fields.every((f) => f.kind !== 'select' || f.options), 'select fields need options');

export const listContentTypesOp = defineOperation({
  id: 'contentTypes.list',
  surface: 'manage',
  method: 'GET',
  path: '/content-types',
  summary: 'Content type definitions and field schemas',
  requires: 'content:read',
  scope: 'none',
  input: ListQuery,
  output: pageEnvelope(ContentTypeView),
  async handler(ctx, query) {
    const { items, page } = pageInOrder(ctx, 'content-types', await listContentTypes(ctx), (type) => type.slug, query);
    return { data: items, page };
  },
});

export const getContentTypeOp = defineOperation({
  id: 'contentTypes.get',
  surface: 'manage',
  method: 'GET',
  path: '/content-types/:slug',
  summary: 'One content type',
  requires: 'content:read',
  scope: 'none',
  input: z.object({ slug: z.string() }),
  output: ContentTypeView,
  async handler(ctx, { slug }) {
    const type = await findContentType(ctx, slug);
    if (!type) throw new NotFoundError();
    return type;
  },
});

export const createContentTypeOp = defineOperation({
  id: 'contentTypes.create',
  surface: 'manage',
  method: 'POST',
  path: '/content-types',
  summary: 'Create a custom content type',
  requires: 'settings:manage',
  errors: [409],
  status: 201,
  input: z.object({
    slug: typeSlug,
    label: z.string().min(1).max(200),
    description: z.string().max(2000).default(''),
    fields: FieldsSchema.default([]),
  }),
  output: ContentTypeView,
  async handler(ctx, input) {
    if (isBuiltinType(input.slug)) throw new ConflictError('A built-in type has this slug');
    const now = ctx.services.clock.now();
    try {
      await contentCollections(ctx.db).types.insertOne({ _id: newId(), siteId: ctx.site._id, ...input, createdAt: now, updatedAt: now });
    } catch (error) {
      if (isDuplicateKey(error)) throw new ConflictError('A content type with this slug exists');
      throw error;
    }
    return { ...input, builtin: false };
  },
});

export const updateContentTypeOp = defineOperation({
  id: 'contentTypes.update',
  surface: 'manage',
  method: 'PATCH',
  path: '/content-types/:slug',
  summary: 'Change a custom content type (label, description, field schema)',
  description: 'Existing entries are checked against the new schema on their next write.',
  requires: 'settings:manage',
  input: z.object({
    slug: z.string(),
    label: z.string().min(1).max(200).optional(),
    description: z.string().max(2000).optional(),
    fields: FieldsSchema.optional(),
  }),
  output: ContentTypeView,
  async handler(ctx, { slug, ...changes }) {
    if (isBuiltinType(slug)) throw new BadRequestError('Built-in types cannot be changed');
    const set = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined));
    const doc = await contentCollections(ctx.db).types.findOneAndUpdate(
      { siteId: ctx.site._id, slug },
      { $set: { ...set, updatedAt: ctx.services.clock.now() } },
      { returnDocument: 'after' },
    );
    if (!doc) throw new NotFoundError();
    return { slug: doc.slug, label: doc.label, description: doc.description, builtin: false, fields: doc.fields };
  },
});

export const deleteContentTypeOp = defineOperation({
  id: 'contentTypes.delete',
  surface: 'manage',
  method: 'DELETE',
  path: '/content-types/:slug',
  summary: 'Delete a custom content type that no entry uses',
  requires: 'settings:manage',
  errors: [409],
  input: z.object({ slug: z.string() }),
  output: z.object({ deleted: z.boolean() }),
  async handler(ctx, { slug }) {
    if (isBuiltinType(slug)) throw new BadRequestError('Built-in types cannot be deleted');
    const { types, entries } = contentCollections(ctx.db);
    if (await entries.findOne({ siteId: ctx.site._id, type: slug }, { projection: { _id: 1 } })) {
      throw new ConflictError('Entries of this type exist (trashed ones included)');
    }
    const result = await types.deleteOne({ siteId: ctx.site._id, slug });
    if (result.deletedCount === 0) throw new NotFoundError();
    return { deleted: true };
  },
});
