import { ENTRY_SCOPE } from './model.ts';
import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import type { OperationContext } from '../core/context.ts';
import type { EntryDoc } from './model.ts';
import { EntryView, toEntryView } from './entry-view.ts';
import { mutateEntry } from './entries.ts';
import { afterEntryWrite } from './entry-effects.ts';
import { statusChange } from './lifecycle.ts';
import { cancelSchedule } from './schedule.ts';

/** After a manual publish or unpublish, a schedule left with no date stops (best effort: its token is gone). */
async function stopEmptiedSchedule(ctx: OperationContext, before: EntryDoc, after: EntryDoc): Promise<void> {
  if (before.schedule && !after.schedule) {
    await cancelSchedule(ctx, after._id).catch((e) => ctx.services.log.warn({ err: e }, 'schedule cancel failed; its token is void'));
  }
}

export const publishEntryOp = defineOperation({
  id: 'content.publish',
  surface: 'manage',
  method: 'POST',
  path: '/content/:id/publish',
  summary: 'Publish the working revision',
  description: 'A pending scheduled publish date is dropped (a scheduled unpublish date stays).',
  requires: 'content:publish',
  scope: ENTRY_SCOPE,
  events: ['content.published'],
  input: z.object({ id: z.string(), expectedVersion: z.number().int().min(0).optional() }),
  output: EntryView,
  async handler(ctx, { id, expectedVersion }) {
    const { before, after } = await mutateEntry(ctx, id, expectedVersion, (current) => ({
      ...statusChange(current, 'published', ctx.services.clock.now()),
      schedule: current.schedule?.unpublishOn ? { ...current.schedule, publishOn: null } : null,
    }));
    await stopEmptiedSchedule(ctx, before, after);
    await afterEntryWrite(ctx, after, { revision: true, publicChange: true, events: ['content.published'] });
    return toEntryView(after);
  },
});

export const unpublishEntryOp = defineOperation({
  id: 'content.unpublish',
  surface: 'manage',
  method: 'POST',
  path: '/content/:id/unpublish',
  summary: 'Take an entry off the public site (back to draft)',
  description: 'Also cancels its schedule, so a pending publish date does not bring it back.',
  requires: 'content:publish',
  scope: ENTRY_SCOPE,
  events: ['content.unpublished'],
  input: z.object({ id: z.string(), expectedVersion: z.number().int().min(0).optional() }),
  output: EntryView,
  async handler(ctx, { id, expectedVersion }) {
    const { before, after } = await mutateEntry(ctx, id, expectedVersion, (current) => ({
      ...statusChange(current, 'draft', ctx.services.clock.now()),
      schedule: null,
    }));
    await stopEmptiedSchedule(ctx, before, after);
    const events = before.status === 'published' ? (['content.unpublished'] as const) : [];
    await afterEntryWrite(ctx, after, { revision: true, publicChange: true, events: [...events] });
    return toEntryView(after);
  },
});
