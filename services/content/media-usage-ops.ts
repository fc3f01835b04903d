import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { findVisible } from '../media/read-ops.ts';
import { MEDIA_SCOPE_FIELDS } from '../media/model.ts';
import { contentCollections, ENTRY_SCOPE, EntryStatusSchema } from './model.ts';
import { searchTerms } from './search-index.ts';
import { loadLanguages } from '../languages/languages.ts';

/** Entries named per answer: enough for a warning before a delete ("used in … and N more" is not needed below it). */
const USAGE_LIMIT = 100;

export const mediaUsageOp = defineOperation({
  id: 'media.usage',
  surface: 'manage',
  method: 'GET',
  path: '/media/:id/usage',
  summary: 'The live entries that use a media item (a `mediaId` in their blocks or fields), for a warning before a delete',
  description:
    'Read from the postings the write path keeps for every entry (view `m`, docs/content.md "Search"); trashed entries are not counted. ' +
    `At most ${USAGE_LIMIT} entries; \`more\` says whether others use it too. Only entries inside the caller's key scope are named.`,
  requires: ['media:read', 'content:read'],
  // The media item is found under the media scope, the entries named under the content scope.
  scope: [MEDIA_SCOPE_FIELDS, ENTRY_SCOPE],
  input: z.object({ id: z.string().min(1).max(64) }),
  output: z.object({
    data: z.array(z.object({ id: z.string(), title: z.string(), type: z.string(), locale: z.string(), status: EntryStatusSchema })),
    more: z.boolean(),
  }),
  async handler(ctx, input) {
    const media = await findVisible(ctx, input.id);
    // Entries this process changed just before are read with their media (search-sync.ts).
    await ctx.services.searchSync.written(ctx.db, ctx.site._id);
    // The site's locales pin the index's locale key (siteId, view, locale, token), so the read is served by it.
    const locales = (await loadLanguages(ctx)).languages.map((language) => language.code);
    const postings = await searchTerms(ctx.db)
      .find(ctx.scope.filter({ siteId: ctx.site._id, view: 'm' as const, locale: { $in: locales }, token: media._id }, ENTRY_SCOPE), {
        projection: { _id: 0, entryId: 1 },
      })
      .limit(USAGE_LIMIT + 1)
      .toArray();
    const ids = postings.slice(0, USAGE_LIMIT).map((posting) => posting.entryId);
    const entries = ids.length
      ? await contentCollections(ctx.db)
          .entries.find({ _id: { $in: ids }, siteId: ctx.site._id, trashedAt: null }, { projection: { title: 1, type: 1, locale: 1, status: 1 } })
          .toArray()
      : [];
    return {
      data: entries.map((entry) => ({ id: entry._id, title: entry.title, type: entry.type, locale: entry.locale, status: entry.status })),
      more: postings.length > USAGE_LIMIT,
    };
  },
});
