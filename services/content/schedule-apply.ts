import type { OperationContext } from '../core/context.ts';
import { NotFoundError } from '../core/errors.ts';
import type { EntryDoc } from './model.ts';
import { changeEntry, settleOwed } from './write-path.ts';
import { statusChange } from './lifecycle.ts';

/** A date applied later than this after it passed says so in the entry's history. */
const LATE_MS = 5_000;

/**
 * Applies one date of a schedule through the write path. Idempotent: it acts only while the entry
 * still carries this schedule's token and that date, so a retried or late activity (replaced or
 * settled schedule) changes nothing. A date applied late (the workspace was suspended, the worker
 * down) is still applied, and its revision says when it was due.
 */
export async function applyScheduledDate(
  ctx: OperationContext,
  entryId: string,
  token: string,
  which: 'publish' | 'unpublish',
): Promise<'applied' | 'skipped'> {
  let due: Date | null = null;
  // A try cut short after its write (worker killed) left its revision and event owed: done first.
  await settleOwed(ctx, { _id: entryId }, 1);
  try {
    const result = await changeEntry(
      ctx,
      entryId,
      undefined,
      (current) => {
        const schedule = current.schedule;
        if (!schedule || schedule.token !== token) return null;
        const now = ctx.services.clock.now();
        if (which === 'publish') {
          if (!schedule.publishOn) return null;
          due = schedule.publishOn;
          const next = schedule.unpublishOn ? { ...schedule, publishOn: null } : null;
          return { ...statusChange(current, 'published', now), schedule: next } satisfies Partial<EntryDoc>;
        }
        if (!schedule.unpublishOn) return null;
        due = schedule.unpublishOn;
        return { ...statusChange(current, 'draft', now), schedule: null } satisfies Partial<EntryDoc>;
      },
      (before) => {
        const late = due && ctx.services.clock.now().getTime() - due.getTime() > LATE_MS;
        const note = `scheduled ${which}${late ? `, due ${due!.toISOString()}, applied late (workspace suspended or worker down)` : ''}`;
        if (which === 'publish') return { events: ['content.published'], note, durable: true, fromSchedule: true };
        return { events: before.status === 'published' ? ['content.unpublished'] : [], note, durable: true, fromSchedule: true };
      },
    );
    return result ? 'applied' : 'skipped';
  } catch (error) {
    if (error instanceof NotFoundError) return 'skipped';
    throw error;
  }
}
