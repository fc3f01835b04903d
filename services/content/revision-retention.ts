import { isDeepStrictEqual } from 'node:util';
import type { Db, Filter } from 'mongodb';
import type { RetentionResult, RetentionRun } from '../core/feature.ts';
import { contentCollections, type EntryDoc, type RevisionDoc } from './model.ts';

const DAY_MS = 24 * 60 * 60_000;
const BATCH = 500;

/** Where the scan stopped: the last revision read, in `{ createdAt, _id }` order. */
interface Position {
  at: Date;
  id: string;
}

function positionOf(saved: Record<string, unknown> | null): Position | null {
  if (!saved || typeof saved.id !== 'string') return null;
  const at = saved.at instanceof Date ? saved.at : typeof saved.at === 'string' ? new Date(saved.at) : null;
  return at && !Number.isNaN(at.getTime()) ? { at, id: saved.id } : null;
}

/** Revisions older than `cutoff`, after `position` in `{ createdAt, _id }` order (index `{ siteId, createdAt, _id }`). */
function olderThan(siteId: string, cutoff: Date, position: Position | null): Filter<RevisionDoc> {
  if (!position) return { siteId, createdAt: { $lt: cutoff } };
  return { siteId, $or: [{ createdAt: { $gt: position.at, $lt: cutoff } }, { createdAt: position.at, _id: { $gt: position.id } }] };
}

type Current = Pick<EntryDoc, '_id' | 'version' | 'live'>;

/** Is this revision what the public site serves (the entry's published snapshot)? */
const isLive = (revision: RevisionDoc, live: EntryDoc['live']) =>
  live !== null &&
  revision.title === live.title &&
  revision.slug === live.slug &&
  revision.excerpt === live.excerpt &&
  isDeepStrictEqual(revision.blocks, live.blocks) &&
  isDeepStrictEqual(revision.fields, live.fields);

/**
 * Of these old revisions, the ids that may go: below the entry's last `kept` versions (so never its
 * current one), and not its published state. The published revision is found by content (the
 * entry's `live` snapshot was copied from the revision written with it; entries do not record its
 * version), read only for the candidates of published entries. A revision whose entry is gone (its
 * purge removes them too) is due as well.
 */
async function dueIds(db: Db, siteId: string, rows: Array<Pick<RevisionDoc, '_id' | 'entryId' | 'version'>>, kept: number): Promise<string[]> {
  const { entries, revisions } = contentCollections(db);
  const entryIds = [...new Set(rows.map((row) => row.entryId))];
  const current = new Map<string, Current>(
    (await entries.find({ siteId, _id: { $in: entryIds } }, { projection: { _id: 1, version: 1, live: 1 } }).toArray()).map((entry) => [entry._id, entry]),
  );
  const candidates = rows.filter((row) => {
    const entry = current.get(row.entryId);
    return !entry || row.version <= entry.version - kept;
  });
  const published = candidates.filter((row) => current.get(row.entryId)?.live);
  if (published.length === 0) return candidates.map((row) => row._id);
  const serving = new Set(
    (await revisions.find({ siteId, _id: { $in: published.map((row) => row._id) } }).toArray())
      .filter((revision) => isLive(revision, current.get(revision.entryId)!.live))
      .map((revision) => revision._id),
  );
  return candidates.filter((row) => !serving.has(row._id)).map((row) => row._id);
}

/**
 * Revisions past the workspace's rule (docs/platform.md, "Retention"): each entry keeps its last
 * `revisionsKept` and every revision newer than `revisionsDays`, and always its current and its
 * published one. The pass reads the site's revisions older than the days in `{ createdAt, _id }`
 * order from where its last pass stopped, at most `budget` of them, and removes those due; at the
 * end of that range it starts over (a revision kept as one of the last few becomes due once the
 * entry has moved on).
 */
export async function pruneRevisions(db: Db, siteId: string, run: RetentionRun): Promise<RetentionResult> {
  const kept = run.rules.revisionsKept;
  if (kept === null) return { removed: {}, resumeAt: null };
  const cutoff = new Date(run.now.getTime() - run.rules.revisionsDays * DAY_MS);
  const { revisions } = contentCollections(db);
  let position = positionOf(run.resumeFrom);
  if (position && position.at >= cutoff) position = null;
  let read = 0;
  let removed = 0;
  while (read < run.budget) {
    const size = Math.min(BATCH, run.budget - read);
    const rows = await revisions
      .find(olderThan(siteId, cutoff, position), { projection: { _id: 1, entryId: 1, version: 1, createdAt: 1 } })
      .sort({ createdAt: 1, _id: 1 })
      .limit(size)
      .toArray();
    read += rows.length;
    if (rows.length > 0) {
      const last = rows[rows.length - 1];
      position = { at: last.createdAt, id: last._id };
      const due = await dueIds(db, siteId, rows, kept);
      if (due.length > 0) removed += (await revisions.deleteMany({ siteId, _id: { $in: due } })).deletedCount;
    }
    if (rows.length < size) return { removed: { revisions: removed }, resumeAt: null };
  }
  return { removed: { revisions: removed }, resumeAt: position ? { at: position.at, id: position.id } : null };
}
