import type { Db } from 'mongodb';
import { bucketCount, bucketOf, docId, generations, manifestId, sha256, writeDocs } from './files.ts';
import { PackStager } from './packs.ts';
import {
  exportIndex,
  exportManifest,
  exportPacks,
  exportRows,
  exportStateId,
  exportStates,
  fromJson,
  toJson,
  type EntryRow,
  type ExportManifestDoc,
  type ExportRowsDoc,
  type LiveOutput,
  type OutputGarbage,
  type SitePage,
  type StoredFile,
} from './model.ts';
import { entryDir, entryJson, indexFile, type PathSite } from './paths.ts';
import type { OutFile } from './pages.ts';

/** Rows per `export_rows` document. */
const ROWS_PER_DOC = 2000;

/** The files of an entry row under the site's permalink rule. */
export const entryPaths = (site: PathSite) => (row: EntryRow) => [indexFile(entryDir(site, row)), entryJson(site, row)];

/** What the run's batches wrote and decided (their index documents, in batch order). */
export async function readRunIndex(db: Db, siteId: string, generation: number) {
  const staged = new Map<string, StoredFile>();
  const changes = new Map<string, EntryRow | null>();
  /** Files of this run that a later file of the same path replaced (the last one written wins). */
  const superseded: StoredFile[] = [];
  for await (const doc of exportIndex(db)
    .find(generations(siteId, generation, generation + 1))
    .sort({ _id: 1 })) {
    for (const file of fromJson(doc.files)) {
      const earlier = staged.get(file.path);
      if (earlier) superseded.push(earlier);
      staged.set(file.path, file);
    }
    for (const change of fromJson(doc.changes)) changes.set(change.entryId, change.row);
  }
  return { staged, changes, superseded };
}

/** The rows and site paths of the live output. */
export async function readLiveRows(db: Db, siteId: string, live: LiveOutput | null): Promise<{ rows: EntryRow[]; sitePages: SitePage[] }> {
  if (!live) return { rows: [], sitePages: [] };
  const ids = Array.from({ length: live.rowChunks }, (_, n) => rowsId(siteId, live.generation, n));
  const docs = await exportRows(db)
    .find({ _id: { $in: ids } })
    .sort({ _id: 1 })
    .toArray();
  return { rows: docs.flatMap((d) => fromJson(d.rows)), sitePages: docs.flatMap((d) => fromJson(d.sitePages)) };
}

/** Rows documents of a live output written at `generation` (each output writes all its rows: a few documents). */
const rowsId = (siteId: string, generation: number, n: number) => docId(siteId, generation, String(n).padStart(5, '0'));

async function writeRows(db: Db, siteId: string, generation: number, rows: EntryRow[], sitePages: SitePage[]): Promise<number> {
  const docs: ExportRowsDoc[] = [];
  for (let n = 0; n === 0 || n * ROWS_PER_DOC < rows.length; n++) {
    docs.push({
      _id: rowsId(siteId, generation, n),
      siteId,
      generation,
      rows: toJson(rows.slice(n * ROWS_PER_DOC, (n + 1) * ROWS_PER_DOC)),
      sitePages: toJson(n === 0 ? sitePages : []),
    });
  }
  // A retry rewrites the same ids (a chunk beyond a retry's count is never read; the next full run drops it).
  await writeDocs(exportRows(db), docs);
  return docs.length;
}

/** Dead marks of `generation` on the packs holding `files`, grouped by pack. */
function marksOf(files: StoredFile[], generation: number): Map<string, { slot: number; generation: number }[]> {
  const marks = new Map<string, { slot: number; generation: number }[]>();
  for (const file of files) {
    const pack = file.parts[0][0];
    marks.set(pack, [...(marks.get(pack) ?? []), { slot: file.slot, generation }]);
  }
  return marks;
}

const pathOrder = (a: StoredFile, b: StoredFile) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

export interface CommitPlan {
  siteId: string;
  runId: string;
  generation: number;
  mode: 'full' | 'incremental';
  live: LiveOutput | null;
  /** The run's files by path (its batches' and its site pages'). */
  staged: Map<string, StoredFile>;
  superseded: StoredFile[];
  rows: EntryRow[];
  sitePages: SitePage[];
  /** Incremental: paths the output loses (withdrawn or moved entries, site pages no longer produced). */
  removed: Set<string>;
}

/**
 * Builds the run's manifest and rows and marks what it replaces dead, all invisible until the
 * commit (one write of `export_state`, done by the caller with what this answers). A full run
 * writes every bucket; an incremental one only the buckets of the paths it wrote or removed.
 * Idempotent: every id derives from the run's generation.
 */
export async function prepareCommit(db: Db, plan: CommitPlan): Promise<{ live: LiveOutput; garbage: OutputGarbage; removedFiles: number }> {
  const { siteId, generation } = plan;
  const rowChunks = await writeRows(db, siteId, generation, plan.rows, plan.sitePages);
  const dead: StoredFile[] = [...plan.superseded];
  if (plan.mode === 'full' || !plan.live) {
    const buckets = bucketCount(plan.staged.size);
    const lists: StoredFile[][] = Array.from({ length: buckets }, () => []);
    let bytes = 0;
    for (const file of plan.staged.values()) {
      lists[bucketOf(file.path, buckets)].push(file);
      bytes += file.length;
    }
    await writeDocs(
      exportManifest(db),
      lists.map((files, bucket) => ({ _id: manifestId(siteId, generation, bucket), siteId, generation, bucket, files: toJson(files.sort(pathOrder)) })),
    );
    await markDead(db, plan, dead);
    const live: LiveOutput = { generation, buckets, versions: Array(buckets).fill(generation), rowChunks, files: plan.staged.size, bytes };
    return { live, garbage: { below: generation, manifests: [], rows: [], marked: [] }, removedFiles: 0 };
  }
  const live = plan.live;
  const touched = new Set([...plan.staged.keys(), ...plan.removed].map((path) => bucketOf(path, live.buckets)));
  const current = await exportManifest(db)
    .find({ _id: { $in: [...touched].map((b) => manifestId(siteId, live.versions[b], b)) } })
    .toArray();
  let files = live.files;
  let bytes = live.bytes;
  let removedFiles = 0;
  const docs: ExportManifestDoc[] = [];
  for (const bucket of touched) {
    const doc = current.find((d) => d.bucket === bucket && d.generation === live.versions[bucket]);
    const byPath = new Map((doc ? fromJson(doc.files) : []).map((file) => [file.path, file]));
    for (const path of plan.removed) {
      if (bucketOf(path, live.buckets) !== bucket) continue;
      const old = byPath.get(path);
      if (!old) continue;
      dead.push(old);
      byPath.delete(path);
      files -= 1;
      bytes -= old.length;
      removedFiles += 1;
    }
    for (const [path, file] of plan.staged) {
      if (bucketOf(path, live.buckets) !== bucket) continue;
      const old = byPath.get(path);
      if (old) {
        dead.push(old);
        bytes -= old.length;
      } else files += 1;
      byPath.set(path, file);
      bytes += file.length;
    }
    docs.push({ _id: manifestId(siteId, generation, bucket), siteId, generation, bucket, files: toJson([...byPath.values()].sort(pathOrder)) });
  }
  await writeDocs(exportManifest(db), docs);
  const marked = await markDead(db, plan, dead);
  const versions = live.versions.map((version, bucket) => (touched.has(bucket) ? generation : version));
  const garbage: OutputGarbage = {
    below: null,
    manifests: [...touched].map((b) => manifestId(siteId, live.versions[b], b)),
    rows: Array.from({ length: live.rowChunks }, (_, n) => rowsId(siteId, live.generation, n)),
    marked,
  };
  return { live: { generation, buckets: live.buckets, versions, rowChunks, files, bytes }, garbage, removedFiles };
}

/**
 * Dead marks, stamped with the run's generation: they count for readers only once it is live. The
 * packs are named in the run's state first, so a run that fails before its commit takes them back.
 */
async function markDead(db: Db, plan: CommitPlan, dead: StoredFile[]): Promise<string[]> {
  const marks = marksOf(dead, plan.generation);
  if (marks.size === 0) return [];
  const marked = [...marks.keys()];
  await exportStates(db).updateOne(
    { _id: exportStateId(plan.siteId), siteId: plan.siteId, 'current.runId': plan.runId },
    { $set: { 'current.marked': marked } },
  );
  await exportPacks(db).bulkWrite(
    [...marks].map(([id, slots]) => ({ updateOne: { filter: { _id: id }, update: { $addToSet: { dead: { $each: slots } } } } })),
    { ordered: false },
  );
  return marked;
}

/**
 * Site pages whose bytes differ from the live output's (all of them for a full run), written as
 * the run's `s` packs. The live hashes come from the rows documents, not from the manifest.
 */
export async function stageSitePages(
  db: Db,
  run: { siteId: string; runId: string; generation: number; mode: 'full' | 'incremental'; staged: Map<string, StoredFile> },
  pages: OutFile[],
  previous: SitePage[],
): Promise<{ written: StoredFile[]; sitePages: SitePage[] }> {
  const before = new Map(previous.map(([path, sha, contentType]) => [path, { sha, contentType }]));
  const stager = new PackStager(db, run.siteId, run.generation, 's', run.runId);
  const sitePages: SitePage[] = [];
  for (const page of pages) {
    // Hashed from the text: the bytes are encoded once, into their pack.
    const sha = sha256(page.body);
    sitePages.push([page.path, sha, page.contentType]);
    const old = run.mode === 'incremental' ? before.get(page.path) : undefined;
    // A site page that shares its path with an entry page of this run (a redirect's page) wins, as it always did.
    if (!old || run.staged.has(page.path) || old.contentType !== page.contentType || old.sha !== sha)
      await stager.add({ path: page.path, contentType: page.contentType, body: page.body, entryId: null });
  }
  return { written: await stager.end(), sitePages };
}
