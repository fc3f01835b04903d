import { mediaUsageOp } from './media-usage-ops.ts';
import type { Feature } from '../core/feature.ts';
import { stopWorkspaceWorkflow } from '../core/workflow-stop.ts';
import { COLLECTIONS, contentCollections } from './model.ts';
import { resumeSchedules, scheduleWorkflowId } from './schedule.ts';
import { createContentTypeOp, deleteContentTypeOp, getContentTypeOp, listContentTypesOp, updateContentTypeOp } from './content-types-ops.ts';
import { getEntryOp, listEntriesOp } from './entries-read-ops.ts';
import { createEntryOp, deleteEntryOp, updateEntryOp } from './entries-write-ops.ts';
import { publishEntryOp, unpublishEntryOp } from './entries-publish-ops.ts';
import { scheduleEntryOp } from './schedule-ops.ts';
import { getRevisionOp, listRevisionsOp } from './revisions-ops.ts';
import { getEntryTermsOp, putEntryTermsOp, putHeaderRefOp } from './entry-terms-ops.ts';
import { listTrashOp, purgeTrashOp, restoreTrashOp } from './trash-ops.ts';
import { createTaxonomyOp, deleteTaxonomyOp, getTaxonomyOp, listTaxonomiesOp, updateTaxonomyOp } from './taxonomies-ops.ts';
import { createTermOp, deleteTermOp, getTermOp, listTermsOp, updateTermOp } from './terms-ops.ts';
import { publicContentTypesOp, publicGetContentOp, publicListContentOp, publicSearchOp } from './public-content-ops.ts';
import { entryTrashKind } from './entries-trash.ts';
import { provisionTaxonomies } from './taxonomies.ts';
import { entryUsage } from './entry-counts.ts';
import { recordedTermRemovalJobs } from './term-removal.ts';
import { SEARCH_INDEXES } from './search-index.ts';
import { cancelImportOp, exportContentOp, getImportOp, importContentOp } from './import-ops.ts';
import { stopImports } from './import-stop.ts';
import { pruneRevisions } from './revision-retention.ts';
import { emptyOldTrash } from './trash-retention.ts';

export const contentFeature: Feature = {
  name: 'content',
  // Only a published entry is read publicly, so a draft's (or a scheduled entry's) insert changes no public answer.
  publicCollections: [
    { name: COLLECTIONS.entries, insertIsPublic: (doc) => doc.status === 'published' },
    COLLECTIONS.types,
    COLLECTIONS.taxonomies,
    COLLECTIONS.terms,
  ],
  operations: [
    mediaUsageOp,
    listContentTypesOp,
    getContentTypeOp,
    createContentTypeOp,
    updateContentTypeOp,
    deleteContentTypeOp,
    listEntriesOp,
    createEntryOp,
    getEntryOp,
    updateEntryOp,
    deleteEntryOp,
    publishEntryOp,
    unpublishEntryOp,
    scheduleEntryOp,
    listRevisionsOp,
    getRevisionOp,
    getEntryTermsOp,
    putEntryTermsOp,
    putHeaderRefOp,
    listTrashOp,
    restoreTrashOp,
    purgeTrashOp,
    listTaxonomiesOp,
    getTaxonomyOp,
    createTaxonomyOp,
    updateTaxonomyOp,
    deleteTaxonomyOp,
    listTermsOp,
    getTermOp,
    createTermOp,
    updateTermOp,
    deleteTermOp,
    importContentOp,
    getImportOp,
    cancelImportOp,
    exportContentOp,
    publicListContentOp,
    publicGetContentOp,
    publicContentTypesOp,
    publicSearchOp,
  ],
  indexes: [
    // Slugs are unique per site and locale; trashed entries keep theirs so a restore never collides.
    { collection: COLLECTIONS.entries, keys: { siteId: 1, locale: 1, slug: 1 }, options: { unique: true } },
    // The Management list (live entries newest first) and the trash (most recently trashed first).
    { collection: COLLECTIONS.entries, keys: { siteId: 1, trashedAt: -1, _id: -1 } },
    // The Management list filtered by one field (the editors' content page), newest or oldest first:
    // without these a status filter read every entry of that status and sorted them (seconds at 100,000).
    { collection: COLLECTIONS.entries, keys: { siteId: 1, status: 1, trashedAt: 1, _id: -1 } },
    { collection: COLLECTIONS.entries, keys: { siteId: 1, type: 1, trashedAt: 1, _id: -1 } },
    { collection: COLLECTIONS.entries, keys: { siteId: 1, locale: 1, trashedAt: 1, _id: -1 } },
    { collection: COLLECTIONS.entries, keys: { siteId: 1, authorId: 1, trashedAt: 1, _id: -1 } },
    // Two fields together: the editors' usual pair ("drafts of this type"); other pairs read one field's index in order.
    { collection: COLLECTIONS.entries, keys: { siteId: 1, type: 1, status: 1, trashedAt: 1, _id: -1 } },
    // The Public API: lists and search (all types, or one), an entry by its public slug.
    { collection: COLLECTIONS.entries, keys: { siteId: 1, status: 1, trashedAt: 1, locale: 1, _id: -1 } },
    { collection: COLLECTIONS.entries, keys: { siteId: 1, type: 1, status: 1, trashedAt: 1, locale: 1, _id: -1 } },
    { collection: COLLECTIONS.entries, keys: { siteId: 1, 'live.slug': 1, status: 1, trashedAt: 1, locale: 1, _id: -1 } },
    // Entries owing a durable write's effects (a term removal cut short): only those rows are in it.
    { collection: COLLECTIONS.entries, keys: { siteId: 1, 'pending.note': 1 }, options: { partialFilterExpression: { pending: { $type: 'object' } } } },
    { collection: COLLECTIONS.revisions, keys: { siteId: 1, entryId: 1, version: -1 } },
    // Retention: a site's revisions older than its days, in scan order (revision-retention.ts).
    { collection: COLLECTIONS.revisions, keys: { siteId: 1, createdAt: 1, _id: 1 } },
    // Content types and taxonomies are `site_config` kinds, unique by slug there (core/site-config.ts).
    { collection: COLLECTIONS.terms, keys: { siteId: 1, taxonomy: 1, slug: 1 }, options: { unique: true } },
    // A taxonomy's terms, newest first (tags grow with the content).
    { collection: COLLECTIONS.terms, keys: { siteId: 1, taxonomy: 1, _id: -1 } },
    // Search postings: the collection and these are created on first use (search-index.ts).
    ...SEARCH_INDEXES,
  ],
  trash: [entryTrashKind],
  async provisionSite(ctx) {
    await provisionTaxonomies(ctx);
  },
  /** Every entry schedule's workflow, every term-removal job recorded in the workspace database, every import still running. */
  async stopWork(services, workspace) {
    const db = services.workspaceDb(workspace);
    let schedules = 0;
    for await (const entry of contentCollections(db).entries.find({ schedule: { $ne: null } }, { projection: { _id: 1 } })) {
      await stopWorkspaceWorkflow(services, workspace, scheduleWorkflowId(workspace._id, entry._id));
      schedules += 1;
    }
    const termRemovals = await recordedTermRemovalJobs(db);
    for (const workflowId of termRemovals) await stopWorkspaceWorkflow(services, workspace, workflowId);
    return { schedules, termRemovals: termRemovals.length, imports: await stopImports(services, workspace) };
  },
  /** Every entry's stored schedule, back in Temporal after an undelete. */
  async resumeWork(services, workspace) {
    return { schedules: await resumeSchedules(services, workspace) };
  },
  // The source's scheduled publications run in a clone too: each entry's stored schedule gets its timer.
  clone: {
    async afterClone(services, workspace) {
      await resumeSchedules(services, workspace);
    },
  },
  /** The kept counters (O(1); content/entry-counts.ts), recounted only when entries were created uncounted since. */
  async usage(services, workspace, siteId) {
    return { entries: await entryUsage(services.workspaceDb(workspace), siteId, services.clock.now()) };
  },
  // Retention (docs/platform.md): the trash first, so revisions of purged entries are not read for nothing.
  async retention(ctx, run) {
    const trash = await emptyOldTrash(ctx, run);
    const revisions = await pruneRevisions(ctx.db, ctx.site._id, run);
    return { removed: { trash, ...revisions.removed }, resumeAt: revisions.resumeAt };
  },
};
