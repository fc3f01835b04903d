import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { ConflictError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { actorUserId } from '../core/principal.ts';
import { emptyBlocks, ENTRY_SCOPE, newEntryState, type EntryDoc } from './model.ts';
import { EntryView, toEntryView } from './entry-view.ts';
import { requireContentType, validateFields } from './content-types.ts';
import { EntryCreateInput, EntryUpdateInput, entryLocale, mergeFields } from './entry-input.ts';
import { slugify } from './entries.ts';
import { isDuplicateKey } from '../core/mongo-errors.ts';
import { changeEntryOrFail, createEntry, requireFuturePublishDate, trashEntry, type ContentEvent } from './write-path.ts';
import { statusChange } from './lifecycle.ts';

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
        ...newEntryState(now),
      };
      try {
        return toEntryView(await createEntry(ctx, doc));
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        if (input.slug) throw new ConflictError('An entry with this slug exists in this locale');
      }
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
    const events = (before: EntryDoc, after: EntryDoc) => {
      const list: ContentEvent[] = ['content.updated'];
      if (status === 'published') list.push('content.published');
      if (before.status === 'published' && after.status !== 'published') list.push('content.unpublished');
      return { events: list };
    };
    const { after } = await changeEntryOrFail(
      ctx,
      id,
      expectedVersion,
      async (current) => {
        const fields = mergeFields(current.fields, changes.fields);
        if (changes.fields) validateFields(await requireContentType(ctx, current.type), fields);
        const set: Partial<EntryDoc> = { fields };
        if (changes.title !== undefined) Object.assign(set, { title: changes.title, titleLower: changes.title.toLowerCase() });
        if (changes.slug !== undefined) set.slug = changes.slug;
        if (changes.excerpt !== undefined) set.excerpt = changes.excerpt;
        if (changes.blocks !== undefined) set.blocks = changes.blocks;
        const now = ctx.services.clock.now();
        if (status === 'scheduled') requireFuturePublishDate(current, now);
        // The write path settles a pending schedule for the status set here (docs/content.md, "Scheduling").
        if (status) Object.assign(set, statusChange({ ...current, ...set }, status, now));
        return set;
      },
      events,
    );
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
    await trashEntry(ctx, id);
    return { id, trashed: true };
  },
});
