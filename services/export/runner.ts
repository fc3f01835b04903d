import type { Db, Filter } from 'mongodb';
import type { Services } from '../core/context.ts';
import { newId } from '../core/ids.ts';
import { contentCollections, type EntryDoc } from '../content/model.ts';
import { toPublicEntry } from '../content/entry-view.ts';
import { PATH_FIELDS, pathFactsOf } from '../content/entry-paths.ts';
import { findSiteScope } from '../tenancy/platform-db.ts';
import type { BatchArgs, BatchResult, ExportMode, ExportRef, RunOutcome, RunPlan } from '../../workflows/contracts/static-export.ts';
import { collectGarbage, discardStaged, docId, generations, liveFilesAt, sha256, writeDocs } from './files.ts';
import { PackStager, type NewFile } from './packs.ts';
import { entryPaths, prepareCommit, readLiveRows, readRunIndex, stageSitePages } from './commit.ts';
import {
  exportIndex,
  exportPlan,
  exportRunId,
  exportStateId,
  exportStates,
  fromJson,
  readExportState,
  siteRuns,
  toJson,
  type EntryRow,
  type ExportRunDoc,
  type ExportPlanDoc,
  type RenderBasis,
  type RunStatus,
  type RunSummary,
} from './model.ts';
import { renderEntryPage, renderSitePages } from './pages.ts';
import { entryDir, entryJson, entryPath, indexFile } from './paths.ts';
import type { PathFacts } from '../core/permalinks.ts';
import type { LinkTargets } from './layout.ts';
import { loadSiteData, type SiteData } from './site-data.ts';
import { siteStateCollection } from '../core/site-state.ts';

/** Run history kept per site. */
export const RUN_HISTORY = 100;

export async function siteOf(services: Services, ref: ExportRef) {
  const scope = await findSiteScope(services, ref.siteId, ref.workspaceId);
  if (!scope) throw new Error(`site ${ref.siteId} not found`);
  return { ...scope, db: services.workspaceDb(scope.workspace) };
}

async function loadSite(services: Services, ref: ExportRef) {
  const found = await siteOf(services, ref);
  return { ...found, data: await loadSiteData(found.db, found.site, services.config) };
}

const isPublished = (doc: Pick<EntryDoc, 'status' | 'trashedAt' | 'live'>) => doc.status === 'published' && doc.trashedAt === null && doc.live !== null;
const PUBLISHED = { status: 'published' as const, trashedAt: null };

/**
 * Which entries a run looks at. Full (or a design change): every published entry. Incremental:
 * every entry changed since the last successful run started, whatever its status, so withdrawn
 * ones lose their pages.
 */
function candidates(siteId: string, since: Date | null): Filter<EntryDoc> {
  if (since) return { siteId, updatedAt: { $gte: since } };
  return { siteId, ...PUBLISHED };
}

/** What an entry's permalink is made of, as the public sees it (content/entry-paths.ts). */
const factsOf = (doc: Parameters<typeof pathFactsOf>[0]): PathFacts => pathFactsOf(doc, false);

/** Menu items may point at entries: their page folders, for every page's menus. */
async function linkTargets(db: Db, siteId: string, data: SiteData): Promise<LinkTargets> {
  const ids: string[] = [];
  const walk = (items: { entryId?: string; children?: unknown[] }[]) => {
    for (const item of items) {
      if (item.entryId) ids.push(item.entryId);
      if (item.children) walk(item.children as never);
    }
  };
  for (const menu of data.menus) walk(menu.items);
  if (ids.length === 0) return { entryDirs: {} };
  const rows = await contentCollections(db)
    .entries.find({ siteId, _id: { $in: ids }, ...PUBLISHED }, { projection: PATH_FIELDS })
    .toArray();
  return { entryDirs: Object.fromEntries(rows.filter((r) => r.live).map((r) => [r._id, entryDir(data, factsOf(r))])) };
}

export async function beginRun(services: Services, ref: ExportRef, runId: string, requested: ExportMode): Promise<RunPlan> {
  const { db, data } = await loadSite(services, ref);
  const state = await readExportState(db, ref.siteId);
  if (state?.current?.runId === runId) {
    // A retried begin: the plan already made.
    const { current } = state;
    // Once per export run (the progress figure), not per request.
    const total = current.total ?? (await contentCollections(db).entries.countDocuments(candidates(ref.siteId, current.since)));
    return {
      mode: current.mode,
      since: current.since?.toISOString() ?? null,
      total,
      startedAt: current.startedAt.toISOString(),
      generation: current.generation,
    };
  }
  const basis: RenderBasis = { themeId: data.theme.id, designHash: data.designHash, pathsKey: data.pathsKey };
  const previous = state?.basis ?? null;
  // A theme switch or a permalink change re-renders everything (full: entry pages move); another design change re-renders every page but
  // writes only the ones whose bytes changed (incremental over all published entries).
  // An output of the earlier storage layout (no `live`) is not read: the next run is full.
  const incremental =
    requested === 'incremental' &&
    state?.live &&
    state.lastSuccessStartedAt &&
    previous &&
    previous.themeId === basis.themeId &&
    previous.pathsKey === basis.pathsKey;
  const mode: ExportMode = incremental ? 'incremental' : 'full';
  const since = incremental && previous.designHash === basis.designHash ? state.lastSuccessStartedAt : null;
  const now = services.clock.now();
  const generation = (state?.generation ?? 0) + 1;
  // Left-overs of a run that never finished (a killed worker, a failed abort) are never served: drop them.
  await discardStaged(db, ref.siteId);
  const total = await writePlan(db, ref.siteId, generation, since, services.exportTuning.batchSize);
  await exportStates(db).updateOne(
    { _id: exportStateId(ref.siteId), siteId: ref.siteId },
    {
      $set: { status: 'running', current: { runId, mode, startedAt: now, generation, since, basis, total }, generation, updatedAt: now },
      $setOnInsert: { lastRun: null, lastSuccessStartedAt: null, basis: null, output: { files: 0, bytes: 0 }, outputVersion: null },
    },
    { upsert: true },
  );
  return { mode, since: since?.toISOString() ?? null, total, startedAt: now.toISOString(), generation };
}

/** The run's candidates, one query for the whole run, in batches keyed by the id they follow (ExportPlanDoc). */
async function writePlan(db: Db, siteId: string, generation: number, since: Date | null, batchSize: number): Promise<number> {
  const ids = (
    await contentCollections(db)
      .entries.find(candidates(siteId, since), { projection: { _id: 1 } })
      .toArray()
  )
    .map((row) => row._id)
    .sort();
  // Plan documents of the same generation left by a begin that failed before recording the run.
  await exportPlan(db).deleteMany(generations(siteId, generation, generation + 1));
  const docs: ExportPlanDoc[] = [];
  for (let i = 0; i === 0 || i < ids.length; i += batchSize) {
    const after = i === 0 ? '_' : ids[i - 1];
    docs.push({
      _id: docId(siteId, generation, `p:${after}`),
      siteId,
      generation,
      ids: toJson(ids.slice(i, i + batchSize)),
      last: i + batchSize >= ids.length,
    });
  }
  await writeDocs(exportPlan(db), docs);
  return ids.length;
}

/** The working copy of an entry (top-level content fields) is not rendered, only `live` is: not fetched. */
const WORKING_COPY = { blocks: 0, fields: 0, titleLower: 0, excerpt: 0, 'live.titleLower': 0 } as const;

/** The batch's entries: by `_id` from the run's plan; by query for a run planned before plans existed. */
async function batchEntries(db: Db, siteId: string, args: BatchArgs): Promise<{ docs: EntryDoc[]; lastId: string | null; done: boolean; processed: number }> {
  const entries = contentCollections(db).entries;
  const plan = await exportPlan(db).findOne({ _id: docId(siteId, args.generation, `p:${args.afterId ?? '_'}`) });
  if (plan) {
    let ids = fromJson(plan.ids);
    let last = plan.last;
    if (ids.length > args.limit) {
      // The plan was cut by the planning worker's batch size; the workflow asks for smaller
      // batches: the rest becomes the plan document that follows this batch (a retry writes it again).
      const rest = ids.slice(args.limit);
      ids = ids.slice(0, args.limit);
      await writeDocs(exportPlan(db), [
        { _id: docId(siteId, args.generation, `p:${ids.at(-1)}`), siteId, generation: args.generation, ids: toJson(rest), last },
      ]);
      last = false;
    }
    const docs = ids.length
      ? (await entries.find({ _id: { $in: ids } }, { projection: WORKING_COPY }).toArray())
          .filter((doc) => doc.siteId === siteId)
          .sort((a, b) => (a._id < b._id ? -1 : 1))
      : [];
    return { docs, lastId: ids.at(-1) ?? args.afterId, done: last, processed: ids.length };
  }
  const filter = candidates(siteId, args.since ? new Date(args.since) : null);
  if (args.afterId) filter._id = { $gt: args.afterId };
  const docs = await entries.find(filter).sort({ _id: 1 }).limit(args.limit).toArray();
  return { docs, lastId: docs.at(-1)?._id ?? args.afterId, done: docs.length < args.limit, processed: docs.length };
}

type Sibling = Pick<EntryDoc, '_id' | 'type' | 'locale' | 'live' | 'slug' | 'publishedAt' | 'terms' | 'authorId'>;

/** Renders (or withdraws) the next `limit` candidates after `afterId` into staged files. Idempotent. */
export async function renderBatch(services: Services, ref: ExportRef, args: BatchArgs): Promise<BatchResult> {
  const { db, data } = await loadSite(services, ref);
  const entries = contentCollections(db).entries;
  const batch = await batchEntries(db, ref.siteId, args);
  const { docs } = batch;
  const targets = await linkTargets(db, ref.siteId, data);
  const slugOf = (doc: EntryDoc) => doc.live?.slug ?? doc.slug;
  // Translations (same type and slug, other active locales) link to each other; with one active
  // locale there are none to look for (a query less per batch: it scans the entries).
  const siblings =
    docs.length && data.locales.length > 1
      ? await entries.find({ siteId: ref.siteId, ...PUBLISHED, 'live.slug': { $in: [...new Set(docs.map(slugOf))] } }, { projection: PATH_FIELDS }).toArray()
      : [];
  const alternatesOf = (type: string, slug: string) =>
    Object.fromEntries(
      (siblings as Sibling[])
        .filter((s) => s.type === type && s.live?.slug === slug && data.locales.includes(s.locale))
        .map((s) => [s.locale, entryDir(data, factsOf(s))]),
    );
  let rendered = 0;
  let removed = 0;
  // Ids derive from the batch's cursor: a retried batch replaces its own earlier attempt.
  const prefix = `e:${args.afterId ?? '_'}`;
  // The batch's pages go into one or two pack documents, each written as soon as it is full; a
  // full run hands every page over as it is rendered, so no page outlives its entry's turn.
  const stager = new PackStager(db, ref.siteId, args.generation, prefix, args.runId);
  /** Incremental: the pages to compare with the live output first (one manifest read for the batch). */
  const held: NewFile[] = [];
  const changes: { entryId: string; row: EntryRow | null }[] = [];
  const render = async (doc: EntryDoc) => {
    const facts = factsOf(doc);
    const entry = toPublicEntry(doc, false, entryPath(data, facts));
    const alternates = alternatesOf(entry.type, entry.slug);
    const dir = entryDir(data, facts);
    const files: NewFile[] = [
      {
        path: indexFile(dir),
        contentType: 'text/html; charset=utf-8',
        body: renderEntryPage(data, entry, doc.terms ?? {}, Object.keys(alternates).length > 1 ? alternates : {}, targets, { dir, headerRef: doc.headerRef }),
        entryId: doc._id,
      },
      { path: entryJson(data, facts), contentType: 'application/json', body: JSON.stringify(entry), entryId: doc._id },
    ];
    changes.push({ entryId: doc._id, row: rowOf(doc) });
    if (args.mode === 'incremental') held.push(...files);
    else for (const file of files) await stager.add(file);
  };
  const touched = new Set<string>();
  for (const doc of docs) {
    touched.add(doc._id);
    if (!isPublished(doc) || !data.locales.includes(doc.locale)) {
      changes.push({ entryId: doc._id, row: null });
      removed += 1;
      continue;
    }
    await render(doc);
    rendered += 1;
  }
  if (args.since) {
    // Incremental: a changed entry's translations show it in their language links, so they are
    // looked at too (and rewritten only if their bytes change).
    const keys = new Set(docs.map((d) => `${d.type}\u0000${slugOf(d)}`));
    const others = siblings.filter((s) => !touched.has(s._id) && keys.has(`${s.type}\u0000${s.live?.slug}`)).map((s) => s._id);
    if (others.length) for (const doc of await entries.find({ siteId: ref.siteId, _id: { $in: others } }).toArray()) if (isPublished(doc)) await render(doc);
  }
  if (held.length) {
    // A page whose bytes equal the live version is not written at all.
    const live = (await readExportState(db, ref.siteId))?.live ?? null;
    const current = await liveFilesAt(
      db,
      ref.siteId,
      live,
      held.map((f) => f.path),
    );
    for (const file of held) {
      const old = current.get(file.path);
      if (!old || old.contentType !== file.contentType || old.sha !== sha256(file.body)) await stager.add(file);
    }
  }
  const files = await stager.end();
  await writeDocs(exportIndex(db), [
    { _id: docId(ref.siteId, args.generation, prefix), siteId: ref.siteId, generation: args.generation, files: toJson(files), changes: toJson(changes) },
  ]);
  return { processed: batch.processed, rendered, written: files.length, removed, lastId: batch.lastId, done: batch.done };
}

const rowOf = (doc: EntryDoc): EntryRow => ({
  id: doc._id,
  type: doc.type,
  locale: doc.locale,
  slug: doc.live!.slug,
  title: doc.live!.title,
  excerpt: doc.live!.excerpt,
  publishedAt: doc.publishedAt?.toISOString() ?? null,
  updatedAt: doc.updatedAt.toISOString(),
  terms: doc.terms ?? {},
  authorId: doc.authorId ?? null,
});

async function recordRun(db: Db, siteId: string, run: RunSummary): Promise<void> {
  await siteStateCollection<ExportRunDoc>(db).updateOne({ _id: exportRunId(siteId, run.runId) }, { $set: { siteId, ...run } }, { upsert: true });
  const old = (await siteRuns(db, siteId, { _id: 1 })).slice(RUN_HISTORY);
  if (old.length) await siteStateCollection<ExportRunDoc>(db).deleteMany({ _id: { $in: old.map((r) => r._id) } });
}

/**
 * Renders the site pages, makes the run's files the served output (one write of the state) and
 * records the run. The list pages come from the live output's rows and the run's changes, so an
 * incremental finish reads no entry and touches only the manifest buckets of what changed.
 * Idempotent: a retry after the commit only completes the garbage collection.
 */
export async function finishRun(services: Services, ref: ExportRef, run: RunOutcome): Promise<void> {
  const { db, data } = await loadSite(services, ref);
  const state = await readExportState(db, ref.siteId);
  if (state?.current?.runId !== run.runId) {
    if (state?.live?.generation === run.generation) await collectGarbage(db, ref.siteId);
    return;
  }
  const live = state.live ?? null;
  const { staged, changes, superseded } = await readRunIndex(db, ref.siteId, run.generation);
  const previous = run.mode === 'incremental' ? await readLiveRows(db, ref.siteId, live) : { rows: [], sitePages: [] };
  // Everything was looked at (a full run, or a design change): the rows are exactly this run's.
  const rebuild = state.current.since === null;
  const byId = new Map(rebuild ? [] : previous.rows.map((row) => [row.id, row]));
  for (const [id, row] of changes) {
    if (row) byId.set(id, row);
    else byId.delete(id);
  }
  const rows = [...byId.values()].filter((row) => data.locales.includes(row.locale));
  const pages = renderSitePages(data, rows, await linkTargets(db, ref.siteId, data));
  const sitePaths = pages.map((p) => p.path);
  const { written: siteFiles, sitePages } = await stageSitePages(
    db,
    { siteId: ref.siteId, runId: run.runId, generation: run.generation, mode: run.mode, staged },
    pages,
    previous.sitePages,
  );
  for (const file of siteFiles) {
    const earlier = staged.get(file.path);
    if (earlier) superseded.push(earlier);
    staged.set(file.path, file);
  }
  // Paths the output loses: pages of entries withdrawn or moved, site pages no longer produced.
  const removed = new Set<string>();
  if (run.mode === 'incremental') {
    const kept = new Set([...rows.flatMap(entryPaths(data)), ...sitePaths]);
    const before = rebuild ? previous.rows : previous.rows.filter((row) => changes.has(row.id));
    for (const path of [...before.flatMap(entryPaths(data)), ...previous.sitePages.map(([path]) => path)])
      if (!kept.has(path) && !staged.has(path)) removed.add(path);
  }
  const commit = await prepareCommit(db, {
    siteId: ref.siteId,
    runId: run.runId,
    generation: run.generation,
    mode: run.mode,
    live,
    staged,
    superseded,
    rows,
    sitePages,
    removed,
  });
  const written = run.written + siteFiles.length;
  const now = services.clock.now();
  const startedAt = run.startedAt ? new Date(run.startedAt) : now;
  const summary: RunSummary = {
    runId: run.runId,
    mode: run.mode,
    status: 'succeeded',
    requestIds: run.requestIds,
    startedAt,
    finishedAt: now,
    rendered: run.rendered,
    written,
    removed: run.mode === 'full' ? Math.max(0, (live?.files ?? 0) - commit.live.files) : run.removed,
    error: null,
  };
  await recordRun(db, ref.siteId, summary);
  await exportStates(db).updateOne(
    { _id: exportStateId(ref.siteId), siteId: ref.siteId, 'current.runId': run.runId },
    {
      $set: {
        status: 'idle',
        current: null,
        live: commit.live,
        garbage: commit.garbage,
        lastSuccessStartedAt: startedAt,
        basis: state.current.basis,
        output: { files: commit.live.files, bytes: commit.live.bytes },
        outputVersion: newId(),
        updatedAt: now,
        lastRun: summary,
      },
    },
  );
  await collectGarbage(db, ref.siteId);
}

/** A cancelled or failed run: its staged files go, the served output stays as it was. Idempotent. */
export async function abortRun(
  services: Services,
  ref: ExportRef,
  run: RunOutcome,
  end: { status: Exclude<RunStatus, 'succeeded'>; error: string | null },
): Promise<void> {
  const { db } = await siteOf(services, ref);
  await discardStaged(db, ref.siteId);
  const now = services.clock.now();
  const summary: RunSummary = {
    runId: run.runId,
    mode: run.mode,
    status: end.status,
    requestIds: run.requestIds,
    startedAt: run.startedAt ? new Date(run.startedAt) : now,
    finishedAt: now,
    rendered: run.rendered,
    written: 0,
    removed: 0,
    error: end.error,
  };
  await recordRun(db, ref.siteId, summary);
  await exportStates(db).updateOne(
    { _id: exportStateId(ref.siteId), siteId: ref.siteId },
    {
      $set: { status: 'idle', current: null, updatedAt: now, lastRun: summary },
      $setOnInsert: { lastSuccessStartedAt: null, basis: null, generation: 0, output: { files: 0, bytes: 0 }, outputVersion: null },
    },
    { upsert: true },
  );
}
