import { z } from 'zod';
import { withinCountQuota } from '../tenancy/quota-guard.ts';
import { defineOperation } from '../core/operation.ts';
import { ConflictError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { actorUserId } from '../core/principal.ts';
import { contentCollections, emptyBlocks, ENTRY_SCOPE, type EntryDoc } from './model.ts';
import { EntryView, toEntryView } from './entry-view.ts';
import { requireContentType, validateFields } from './content-types.ts';
import { EntryCreateInput, EntryUpdateInput, entryLocale, mergeFields } from './entry-input.ts';
import { findEntryForWrite, mutateEntry, slugify } from './entries.ts';
import { isDuplicateKey } from '../core/mongo-errors.ts';
import { afterEntryWrite, type ContentEvent } from './entry-effects.ts';
import { statusChange } from './lifecycle.ts';
import { cancelSchedule } from './schedule.ts';

export const createEntryOp = defineOperation({
  id: 'content.create',
  surface: 'manage',
  method: 'POST',
  path: '/content',
  summary: 'Create a content entry (draft)',
  requires: 'content:create',
  scope: ENTRY_SCOPE,
  errors: [409],
  status: 201,
  events: ['content.created'],
  input: EntryCreateInput,
  output: EntryView,
  async handler(ctx, input) {
    const type = await requireContentType(ctx, input.type);
    const fields = input.fields ?? {};
    validateFields(type, fields);
    const locale = await entryLocale(ctx, input.locale);
    const authorId = actorUserId(ctx.principal);
    ctx.scope.check({ type: type.slug, locale, authorId }, ENTRY_SCOPE);
    const now = ctx.services.clock.now();
    const base = slugify(input.title);
    const { entries } = contentCollections(ctx.db);
    // A given slug must be free (409); a derived one gets -2, -3, ... until it is.
    for (let attempt = 1; attempt <= 50; attempt++) {
      const slug = input.slug ?? (attempt === 1 ? base : `${base}-${attempt}`);
      const doc: EntryDoc = {
        _id: newId(now.getTime()),
        siteId: ctx.site._id,
        type: type.slug,
        title: input.title,
        titleLower: input.title.toLowerCase(),
        slug,
        locale,
        status: 'draft',
        excerpt: input.excerpt ?? null,
        blocks: input.blocks ?? emptyBlocks(),
        fields,
        live: null,
        publishedAt: null,
        authorId,
        terms: {},
        headerRef: { mode: 'default' },
        schedule: null,
        createdAt: now,
        updatedAt: now,
        version: 1,
        trashedAt: null,
      };
      try {
        const live = (siteId: string | null) => entries.countDocuments(siteId ? { siteId, trashedAt: null } : { trashedAt: null });
        await withinCountQuota(ctx, 'entries', live, () => entries.insertOne(doc));
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        if (input.slug) throw new ConflictError('An entry with this slug exists in this locale');
        continue;
      }
      await afterEntryWrite(ctx, doc, { revision: true, events: ['content.created'] });
      return toEntryView(doc);
    }
    throw new ConflictError('Could not find a free slug; give one');
  },
});

export const updateEntryOp = defineOperation({
  id: 'content.update',
  surface: 'manage',
  method: 'PATCH',
  path: '/content/:id',
  summary: 'Change the working revision and/or the status',
  description: 'With `expectedVersion` the write only lands if the entry is still at that version (else 409).',
  requires: 'content:update',
  scope: ENTRY_SCOPE,
  events: ['content.updated', 'content.published', 'content.unpublished'],
  input: EntryUpdateInput,
  output: EntryView,
  async handler(ctx, { id, expectedVersion, status, ...changes }) {
    const { before, after } = await mutateEntry(ctx, id, expectedVersion, async (current) => {
      const fields = mergeFields(current.fields, changes.fields);
      if (changes.fields) validateFields(await requireContentType(ctx, current.type), fields);
      const set: Partial<EntryDoc> = { fields };
      if (changes.title !== undefined) Object.assign(set, { title: changes.title, titleLower: changes.title.toLowerCase() });
      if (changes.slug !== undefined) set.slug = changes.slug;
      if (changes.excerpt !== undefined) set.excerpt = changes.excerpt;
      if (changes.blocks !== undefined) set.blocks = changes.blocks;
      if (status) Object.assign(set, statusChange({ ...current, ...set }, status, ctx.services.clock.now()));
      return set;
    });
    const events: ContentEvent[] = ['content.updated'];
    if (status === 'published') events.push('content.published');
    if (before.status === 'published' && after.status !== 'published') events.push('content.unpublished');
    await afterEntryWrite(ctx, after, { revision: true, publicChange: true, events });
    return toEntryView(after);
  },
});

export const deleteEntryOp = defineOperation({
  id: 'content.delete',
  surface: 'manage',
  method: 'DELETE',
  path: '/content/:id',
  summary: 'Move an entry to the trash',
  requires: 'content:delete',
  scope: ENTRY_SCOPE,
  events: ['content.deleted'],
  input: z.object({ id: z.string() }),
  output: z.object({ id: z.string(), trashed: z.boolean() }),
  async handler(ctx, { id }) {
    const current = await findEntryForWrite(ctx, id);
    const now = ctx.services.clock.now();
    const doc = await contentCollections(ctx.db).entries.findOneAndUpdate(
      { _id: id, siteId: ctx.site._id, trashedAt: null },
      { $set: { trashedAt: now, updatedAt: now }, $inc: { version: 1 } },
      { returnDocument: 'after' },
    );
    if (!doc) return { id: current._id, trashed: true };
    // Best effort: the trashed entry makes any surviving schedule activity a no-op.
    if (current.schedule) await cancelSchedule(ctx, id).catch((e) => ctx.services.log.warn({ err: e }, 'schedule cancel failed'));
    await afterEntryWrite(ctx, doc, { publicChange: true, events: ['content.deleted'] });
    return { id, trashed: true };
  },
});
