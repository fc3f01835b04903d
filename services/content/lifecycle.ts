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

/**
 * What a status set by hand leaves of a pending schedule (docs/content.md, "Scheduling": the
 * table). Publishing drops the publish date and keeps a later unpublish date; `scheduled` keeps
 * the schedule (the caller checked its publish date is still to come); draft and archived settle
 * it entirely, so no date ever overrides a person's explicit choice.
 */
export function settleSchedule(current: EntryDoc, status: EntryStatus, now: Date): EntryDoc['schedule'] {
  const schedule = current.schedule;
  if (!schedule) return null;
  if (status === 'scheduled') return schedule;
  if (status === 'published') return schedule.unpublishOn && schedule.unpublishOn > now ? { ...schedule, publishOn: null } : null;
  return null;
}
