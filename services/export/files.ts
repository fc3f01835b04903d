import { createHash } from 'node:crypto';
import { MongoBulkWriteError, type Binary, type Collection, type Db, type Filter, type OptionalUnlessRequiredId, type WithoutId } from 'mongodb';
import { dropIfExists } from '../core/mongo-errors.ts';
import {
  exportIndex,
  exportManifest,
  exportPacks,
  exportPlan,
  exportRows,
  exportStateId,
  exportStates,
  fromJson,
  readExportState,
  type LiveOutput,
  type StoredFile,
} from './model.ts';

/**
 * Storage of the export output (docs/plugins.md, "Storage layout"). Chosen for an engine that pays
 * per document written and uses only `_id` (and unique) indexes:
 * - bodies are packed, many files per document (`export_packs`, up to PACK_BYTES each);
 * - a manifest maps path → file in buckets by hash of the path (`export_manifest`), each bucket
 *   with its own live version, so an incremental run rewrites only the buckets it touches;
 * - which generation of everything is served is one field of `export_state` (`live`): a run's
 *   commit is one write, and everything a run wrote before it is invisible to readers;
 * - every id starts `<siteId>:<generation>:`, so "this run's documents", "everything older" and
 *   "the site's output" are `_id` ranges.
 */
export const sha256 = (body: Buffer | string) => createHash('sha256').update(body).digest('base64url');

/** Bytes per pack: a batch of 200 entry pages is one or two writes; a preview read fetches one pack. */
export const PACK_BYTES = 512 * 1024;

const pad = (generation: number) => String(generation).padStart(10, '0');
export const docId = (siteId: string, generation: number, rest: string) => `${siteId}:${pad(generation)}:${rest}`;

/** `_id` filter: a site's documents of generations [from, to) (to null: no upper bound). Site ids hold no `:`. */
export function generations(siteId: string, from: number, to: number | null): { _id: { $gte: string; $lt: string } } {
  return { _id: { $gte: `${siteId}:${pad(from)}`, $lt: to === null ? `${siteId};` : `${siteId}:${pad(to)}` } };
}

/** `_id` filter: documents whose id starts with `<siteId>:<generation>:<prefix>:`. */
export const prefixed = (siteId: string, generation: number, prefix: string) => ({
  _id: { $gte: docId(siteId, generation, `${prefix}:`), $lt: docId(siteId, generation, `${prefix};`) },
});

export const bucketOf = (path: string, buckets: number) => Number.parseInt(createHash('sha256').update(path).digest('hex').slice(0, 8), 16) % buckets;
export const manifestId = (siteId: string, generation: number, bucket: number) => docId(siteId, generation, String(bucket).padStart(5, '0'));

/** About 300 files per manifest bucket (a bucket is read per preview request and rewritten when one of its paths changes). */
export const bucketCount = (files: number) => Math.min(4096, Math.max(8, 2 ** Math.ceil(Math.log2(Math.max(1, files / 300)))));

/**
 * Plain inserts (a first attempt: inserts cost the engine far less than upserts); upserts by id
 * when a retried activity meets documents of its own earlier attempt.
 */
export async function writeDocs<T extends { _id: string }>(collection: Collection<T>, docs: T[]): Promise<void> {
  if (docs.length === 0) return;
  try {
    await collection.insertMany(docs as OptionalUnlessRequiredId<T>[], { ordered: false });
    return;
  } catch (error) {
    if (!(error instanceof MongoBulkWriteError) || error.code !== 11000) throw error;
  }
  await collection.bulkWrite(
    docs.map((doc) => ({ replaceOne: { filter: { _id: doc._id } as Filter<T>, replacement: doc as WithoutId<T>, upsert: true } })),
    { ordered: false },
  );
}

export async function liveOutput(db: Db, siteId: string): Promise<LiveOutput | null> {
  return (await readExportState(db, siteId))?.live ?? null;
}

/** The live files of `paths` (one read of the buckets they fall in, by `_id`). */
export async function liveFilesAt(db: Db, siteId: string, live: LiveOutput | null, paths: Iterable<string>): Promise<Map<string, StoredFile>> {
  const out = new Map<string, StoredFile>();
  if (!live) return out;
  const wanted = new Set(paths);
  if (wanted.size === 0) return out;
  const ids = [...new Set([...wanted].map((path) => bucketOf(path, live.buckets)))].map((b) => manifestId(siteId, live.versions[b], b));
  for await (const bucket of exportManifest(db).find({ _id: { $in: ids } }))
    for (const file of fromJson(bucket.files)) if (wanted.has(file.path)) out.set(file.path, file);
  return out;
}

/** The served file at a path, or null. */
export async function liveFile(db: Db, siteId: string, path: string, live?: LiveOutput | null): Promise<StoredFile | null> {
  const output = live === undefined ? await liveOutput(db, siteId) : live;
  return (await liveFilesAt(db, siteId, output, [path])).get(path) ?? null;
}

const bytesOf = (data: Binary) => Buffer.from(data.buffer.buffer, data.buffer.byteOffset, data.position);

/** The bytes of a file, or of `range` (inclusive) of it: the packs it lies in, a few per round trip. */
export async function* readFile(db: Db, file: StoredFile, range?: { start: number; end: number }): AsyncGenerator<Buffer> {
  if (file.length === 0) return;
  const start = range?.start ?? 0;
  const end = range?.end ?? file.length - 1;
  let at = 0;
  const touched = file.parts.filter(([, , length]) => {
    const hit = at + length > start && at <= end;
    at += length;
    return hit;
  });
  let position = file.parts.slice(0, file.parts.indexOf(touched[0])).reduce((sum, [, , length]) => sum + length, 0);
  for (let i = 0; i < touched.length; i += 4) {
    const group = touched.slice(i, i + 4);
    const rows = new Map(
      (
        await exportPacks(db)
          .find({ _id: { $in: group.map(([id]) => id) } }, { projection: { data: 1 } })
          .toArray()
      ).map((row) => [row._id, row.data]),
    );
    for (const [id, offset, length] of group) {
      const data = rows.get(id);
      if (!data) throw new Error(`export pack ${id} is missing`);
      const bytes = bytesOf(data).subarray(offset, offset + length);
      yield bytes.subarray(Math.max(0, start - position), Math.min(length, end + 1 - position));
      position += length;
    }
  }
}

/** The served bytes of a path (small files: pages, feeds, rules). */
export async function readExportFile(db: Db, siteId: string, path: string, live?: LiveOutput | null): Promise<{ body: Buffer; file: StoredFile } | null> {
  const file = await liveFile(db, siteId, path, live);
  if (!file) return null;
  const parts: Buffer[] = [];
  for await (const chunk of readFile(db, file)) parts.push(chunk);
  return { body: Buffer.concat(parts), file };
}

/** A pack of the live output: its live files, and its bytes when asked for. */
export interface LivePack {
  id: string;
  files: StoredFile[];
  data: Buffer | null;
}

/**
 * The live output pack by pack in `_id` order (the archive's order): files a later generation
 * replaced or removed are left out by their dead marks. A cursor of a few packs at a time, so
 * memory stays flat whatever the size.
 */
export async function* livePacks(db: Db, siteId: string, live: LiveOutput, withData: boolean): AsyncGenerator<LivePack> {
  const cursor = exportPacks(db)
    .find(generations(siteId, 0, live.generation + 1), withData ? {} : { projection: { files: 1, dead: 1 } })
    .sort({ _id: 1 })
    .batchSize(4);
  for await (const pack of cursor) {
    const listed = fromJson(pack.files);
    if (listed.length === 0) continue; // a continuation of a big file
    const dead = new Set((pack.dead ?? []).filter((mark) => mark.generation <= live.generation).map((mark) => mark.slot));
    const files = dead.size ? listed.filter((file) => !dead.has(file.slot)) : listed;
    if (files.length) yield { id: pack._id, files, data: withData ? bytesOf(pack.data) : null };
  }
}

/** The bytes of one pack (the archive fetches the packs a range touches). */
export async function packData(db: Db, id: string): Promise<Buffer> {
  const row = await exportPacks(db).findOne({ _id: id }, { projection: { data: 1 } });
  if (!row) throw new Error(`export pack ${id} is missing`);
  return bytesOf(row.data);
}

const collections = (db: Db) =>
  [exportPacks(db), exportManifest(db), exportIndex(db), exportRows(db), exportPlan(db)].map((c) => db.collection<{ _id: string }>(c.collectionName));

/**
 * Drops what runs wrote that never became live (a cancelled, failed or killed run) and their dead
 * marks on live packs. Readers never saw any of it.
 */
export async function discardStaged(db: Db, siteId: string): Promise<void> {
  const state = await readExportState(db, siteId);
  // Only a run that neither finished nor was aborted (its `current` is still set) leaves anything.
  if (!state?.current) return;
  const live = state.live?.generation ?? 0;
  await Promise.all(collections(db).map((c) => c.deleteMany(generations(siteId, live + 1, null))));
  const marked = state.current.marked ?? [];
  if (marked.length) await exportPacks(db).updateMany({ _id: { $in: marked } }, { $pull: { dead: { generation: { $gt: live } } } });
}

/** Every document of a site's output, live or not. */
export async function clearExportFiles(db: Db, siteId: string): Promise<void> {
  await Promise.all(collections(db).map((c) => c.deleteMany(generations(siteId, 0, null))));
}

/** Collections of the earlier GridFS-shaped layout: not read any more; a full run drops them. */
const LEGACY = ['export.files', 'export.chunks', 'export_entry_changes'];

async function dropLegacy(db: Db): Promise<void> {
  for (const name of LEGACY) {
    await dropIfExists(db.collection(name));
  }
}

/**
 * Deletes what the live generation replaced (listed in `export_state.garbage` by the commit, so a
 * retried finish completes it): after a full run everything older; after an incremental run the
 * manifest buckets and rows it replaced and the packs whose every file is now dead. Idempotent.
 */
export async function collectGarbage(db: Db, siteId: string): Promise<void> {
  const state = await readExportState(db, siteId);
  const live = state?.live;
  const garbage = state?.garbage;
  if (!live || !garbage) return;
  const deletes: Promise<unknown>[] = [exportIndex(db).deleteMany(generations(siteId, 0, live.generation + 1))];
  if (garbage.below !== null) {
    deletes.push(...collections(db).map((c) => c.deleteMany(generations(siteId, 0, garbage.below))), dropLegacy(db));
  }
  if (garbage.manifests.length) deletes.push(exportManifest(db).deleteMany({ _id: { $in: garbage.manifests } }));
  if (garbage.rows.length) deletes.push(exportRows(db).deleteMany({ _id: { $in: garbage.rows } }));
  await Promise.all(deletes);
  if (garbage.marked.length) {
    const packs = await exportPacks(db)
      .find({ _id: { $in: garbage.marked } }, { projection: { files: 1, dead: 1 } })
      .toArray();
    const gone = packs
      .map((pack) => ({ pack, files: fromJson(pack.files) }))
      .filter(
        ({ pack, files }) =>
          files.length > 0 && new Set((pack.dead ?? []).filter((m) => m.generation <= live.generation).map((m) => m.slot)).size >= files.length,
      )
      .flatMap(({ pack, files }) => [pack._id, ...files.flatMap((file) => file.parts.map(([id]) => id))]);
    if (gone.length) await exportPacks(db).deleteMany({ _id: { $in: [...new Set(gone)] } });
  }
  await exportStates(db).updateOne({ _id: exportStateId(siteId), siteId, 'live.generation': live.generation }, { $set: { garbage: null } });
}
