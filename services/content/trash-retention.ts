import type { OperationContext } from '../core/context.ts';
import type { RetentionRun } from '../core/feature.ts';
import { trashKinds } from './trash-ops.ts';

const DAY_MS = 24 * 60 * 60_000;
const BATCH = 200;

/**
 * Empties what has been in the trash longer than `trashDays`, every kind (entries, media, menus),
 * through each kind's own purge: the one `DELETE /trash` uses, so everything around an item follows
 * as for a manual purge (an entry's revisions, search postings and counters through the write path,
 * a media file's bytes and its `mediaBytes` usage). Each kind lists its items trashed before the
 * cutoff (its trash list after the mark `{ cutoff, '' }`, by its `{ siteId, trashedAt, _id }` index),
 * at most `budget` per kind and pass. Returns the items purged.
 */
export async function emptyOldTrash(ctx: OperationContext, run: RetentionRun): Promise<number> {
  const days = run.rules.trashDays;
  if (days === null) return 0;
  const mark = { trashedAt: new Date(run.now.getTime() - days * DAY_MS), id: '' };
  let purged = 0;
  for (const kind of trashKinds(ctx)) {
    let read = 0;
    while (read < run.budget) {
      const size = Math.min(BATCH, run.budget - read);
      const items = await kind.list(ctx, size, mark);
      read += items.length;
      let removed = 0;
      for (const item of items) if (await kind.purge(ctx, item.id)) removed++;
      purged += removed;
      // An item that would not go (a purge racing a restore) is listed again: stop rather than spin.
      if (items.length < size || removed === 0) break;
    }
  }
  return purged;
}
