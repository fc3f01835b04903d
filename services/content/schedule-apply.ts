import type { OperationContext } from '../core/context.ts';
import { NotFoundError } from '../core/errors.ts';
import type { EntryDoc } from './model.ts';
import { mutateEntry } from './entries.ts';
import { afterEntryWrite } from './entry-effects.ts';
import { statusChange } from './lifecycle.ts';

class Skip extends Error {}

/**
 * Applies one date of a schedule. Idempotent: it acts only while the entry still carries this
 * schedule's token and that date, so a retried or late activity (replaced schedule) changes nothing.
 */
export async function applyScheduledDate(ctx: OperationContext, entryId: string, token: string, which: 'publish' | 'unpublish'): Promise<'applied' | 'skipped'> {
  try {
    const { after } = await mutateEntry(ctx, entryId, undefined, (current) => {
      const schedule = current.schedule;
      if (!schedule || schedule.token !== token) throw new Skip();
      const now = ctx.services.clock.now();
      if (which === 'publish') {
        if (!schedule.publishOn) throw new Skip();
        const next = schedule.unpublishOn ? { ...schedule, publishOn: null } : null;
        return { ...statusChange(current, 'published', now), schedule: next } satisfies Partial<EntryDoc>;
      }
      if (!schedule.unpublishOn) throw new Skip();
      return { ...statusChange(current, 'draft', now), schedule: null } satisfies Partial<EntryDoc>;
    });
    await afterEntryWrite(ctx, after, {
      revision: true,
      publicChange: true,
      events: which === 'publish' ? ['content.published'] : ['content.unpublished'],
    });
    return 'applied';
  } catch (error) {
    if (error instanceof Skip || error instanceof NotFoundError) return 'skipped';
    throw error;
  }
}
