import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { EntryView, toEntryView } from './entry-view.ts';
import { mutateEntry } from './entries.ts';
import { afterEntryWrite } from './entry-effects.ts';
import { statusChange } from './lifecycle.ts';

export const publishEntryOp = defineOperation({
  id: 'content.publish',
  surface: 'manage',
  method: 'POST',
  path: '/content/:id/publish',
  summary: 'Publish the working revision',
  requires: 'content:publish',
  events: ['content.published'],
  input: z.object({ id: z.string(), expectedVersion: z.number().int().min(0).optional() }),
  output: EntryView,
  async handler(ctx, { id, expectedVersion }) {
    const { after } = await mutateEntry(ctx, id, expectedVersion, (current) =>
      statusChange(current, 'published', ctx.services.clock.now()),
    );
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
  requires: 'content:publish',
  events: ['content.unpublished'],
  input: z.object({ id: z.string(), expectedVersion: z.number().int().min(0).optional() }),
  output: EntryView,
  async handler(ctx, { id, expectedVersion }) {
    const { before, after } = await mutateEntry(ctx, id, expectedVersion, (current) =>
      statusChange(current, 'draft', ctx.services.clock.now()),
    );
    const events = before.status === 'published' ? (['content.unpublished'] as const) : [];
    await afterEntryWrite(ctx, after, { revision: true, publicChange: true, events: [...events] });
    return toEntryView(after);
  },
});
