import type { Db, Filter } from 'mongodb';
import type { Services } from '../core/context.ts';
import { contentCollections, type EntryDoc } from '../content/model.ts';
import { toPublicEntry } from '../content/entry-view.ts';
import { activeTheme } from '../plugins/themes.ts';
import { platformCollections } from '../platform/workspaces.ts';
import { entryPaths, renderEntryHtml, renderIndexHtml, type IndexItem } from './render.ts';
import { outputFigures, removeEntryFiles, sweepStaleFiles, writeExportFile } from './files.ts';
import { exportStates, readExportState, type ExportMode, type ExportRef } from './model.ts';

export interface RunPlan {
  /** `incremental` without an earlier successful run is done as `full`. */
  mode: ExportMode;
  since: string | null;
  total: number;
  startedAt: string;
}

export interface BatchResult {
  processed: number;
  rendered: number;
  removed: number;
  lastId: string | null;
  done: boolean;
}

export async function siteOf(services: Services, ref: ExportRef) {
  const { workspaces, sites } = platformCollections(services);
  const workspace = await workspaces.findOne({ _id: ref.workspaceId });
  const site = await sites.findOne({ _id: ref.siteId, workspaceId: ref.workspaceId });
  if (!workspace || !site) throw new Error(`site ${ref.siteId} not found`);
  return { workspace, site, db: services.workspaceDb(workspace) };
}

const isPublished = (doc: EntryDoc) => doc.status === 'published' && doc.trashedAt === null && doc.live !== null;

/**
 * Which entries a run looks at. Full: every published entry. Incremental: every entry changed
 * since the last successful run started, whatever its status, so withdrawn ones lose their pages.
 */
function candidates(siteId: string, since: Date | null): Filter<EntryDoc> {
  if (since) return { siteId, updatedAt: { $gte: since } };
  return { siteId, status: 'published', trashedAt: null };
}

export async function beginRun(services: Services, ref: ExportRef, runId: string, requested: ExportMode): Promise<RunPlan> {
  const { db } = await siteOf(services, ref);
  const state = await readExportState(db, ref.siteId);
  const since = requested === 'incremental' ? (state?.lastSuccessStartedAt ?? null) : null;
  const mode: ExportMode = since ? 'incremental' : 'full';
  const now = services.clock.now();
  const total = await contentCollections(db).entries.countDocuments(candidates(ref.siteId, since));
  await exportStates(db).updateOne(
    { _id: ref.siteId, siteId: ref.siteId },
    {
      $set: { status: 'running', current: { runId, mode, startedAt: now }, updatedAt: now },
      $setOnInsert: { lastRun: null, lastSuccessStartedAt: null, output: { files: 0, bytes: 0 } },
    },
    { upsert: true },
  );
  return { mode, since: since?.toISOString() ?? null, total, startedAt: now.toISOString() };
}

/** Renders (or removes) the next `limit` candidates after `afterId`. Rewrites are idempotent. */
export async function renderBatch(
  services: Services,
  ref: ExportRef,
  args: { runId: string; since: string | null; afterId: string | null; limit: number },
): Promise<BatchResult> {
  const { db } = await siteOf(services, ref);
  const filter = candidates(ref.siteId, args.since ? new Date(args.since) : null);
  if (args.afterId) filter._id = { $gt: args.afterId };
  const docs = await contentCollections(db).entries.find(filter).sort({ _id: 1 }).limit(args.limit).toArray();
  const theme = await activeTheme(db, ref.siteId);
  let rendered = 0;
  let removed = 0;
  for (const doc of docs) {
    if (!isPublished(doc)) {
      removed += await removeEntryFiles(db, ref.siteId, doc._id);
      continue;
    }
    const entry = toPublicEntry(doc, false);
    const paths = entryPaths(entry);
    const common = { siteId: ref.siteId, entryId: doc._id, runId: args.runId };
    await writeExportFile(db, { ...common, path: paths.html, contentType: 'text/html; charset=utf-8', body: renderEntryHtml(entry, theme) });
    await writeExportFile(db, { ...common, path: paths.json, contentType: 'application/json', body: JSON.stringify(entry) });
    await removeEntryFiles(db, ref.siteId, doc._id, [paths.html, paths.json]);
    rendered += 1;
  }
  return { processed: docs.length, rendered, removed, lastId: docs.at(-1)?._id ?? args.afterId, done: docs.length < args.limit };
}

async function writeIndex(db: Db, ref: ExportRef, runId: string, siteName: string): Promise<void> {
  const rows = await contentCollections(db)
    .entries.find({ siteId: ref.siteId, status: 'published', trashedAt: null }, { projection: { _id: 1, type: 1, locale: 1, live: 1, publishedAt: 1 } })
    .sort({ publishedAt: -1, _id: -1 })
    .toArray();
  const items: IndexItem[] = rows
    .filter((row) => row.live)
    .map((row) => ({ id: row._id, title: row.live!.title, type: row.type, locale: row.locale, slug: row.live!.slug, publishedAt: row.publishedAt?.toISOString() ?? null }));
  const theme = await activeTheme(db, ref.siteId);
  const common = { siteId: ref.siteId, entryId: null, runId };
  await writeExportFile(db, { ...common, path: 'index.html', contentType: 'text/html; charset=utf-8', body: renderIndexHtml(siteName, items, theme) });
  await writeExportFile(db, { ...common, path: 'index.json', contentType: 'application/json', body: JSON.stringify({ items }) });
}

export async function finishRun(
  services: Services,
  ref: ExportRef,
  run: { runId: string; mode: ExportMode; requestIds: string[]; startedAt: string; rendered: number; removed: number },
): Promise<void> {
  const { db, site } = await siteOf(services, ref);
  await writeIndex(db, ref, run.runId, site.name);
  const swept = run.mode === 'full' ? await sweepStaleFiles(db, ref.siteId, run.runId) : 0;
  const output = await outputFigures(db, ref.siteId);
  const startedAt = new Date(run.startedAt);
  await exportStates(db).updateOne(
    { _id: ref.siteId, siteId: ref.siteId, 'current.runId': run.runId },
    {
      $set: {
        status: 'idle',
        current: null,
        lastSuccessStartedAt: startedAt,
        output,
        updatedAt: services.clock.now(),
        lastRun: { runId: run.runId, mode: run.mode, status: 'succeeded', requestIds: run.requestIds, startedAt, finishedAt: services.clock.now(), rendered: run.rendered, removed: run.removed + swept, error: null },
      },
    },
  );
}

export async function failRun(
  services: Services,
  ref: ExportRef,
  run: { runId: string; mode: ExportMode; requestIds: string[]; startedAt: string | null; error: string },
): Promise<void> {
  const { db } = await siteOf(services, ref);
  const now = services.clock.now();
  await exportStates(db).updateOne(
    { _id: ref.siteId, siteId: ref.siteId },
    {
      $set: {
        status: 'idle',
        current: null,
        output: await outputFigures(db, ref.siteId),
        updatedAt: now,
        lastRun: { runId: run.runId, mode: run.mode, status: 'failed', requestIds: run.requestIds, startedAt: run.startedAt ? new Date(run.startedAt) : now, finishedAt: now, rendered: 0, removed: 0, error: run.error },
      },
      $setOnInsert: { lastSuccessStartedAt: null },
    },
    { upsert: true },
  );
}
