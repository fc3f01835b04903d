import type { EntryDoc, EntryStatus } from './model.ts';
import { snapshotOf } from './entries.ts';

/**
 * The fields a status change sets. Publishing copies the working revision into `live` (what the
 * Public API serves); every other status takes the entry off the public site. `publishedAt` keeps
 * the first publication date while an entry stays published (re-publishing an edit).
 */
export function statusChange(merged: EntryDoc, status: EntryStatus, now: Date): Partial<EntryDoc> {
  if (status === 'published') {
    const publishedAt = merged.status === 'published' && merged.publishedAt ? merged.publishedAt : now;
    return { status, live: snapshotOf(merged), publishedAt };
  }
  return { status, live: null, publishedAt: null };
}
