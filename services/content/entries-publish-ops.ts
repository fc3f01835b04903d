import { ENTRY_SCOPE } from './model.ts';
import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { EntryView, toEntryView } from './entry-view.ts';
import { changeEntryOrFail } from './write-path.ts';
import { statusChange } from './lifecycle.ts';

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
    const { after } = await changeEntryOrFail(
      ctx,
      id,
      expectedVersion,
      (current) => statusChange(current, 'published', ctx.services.clock.now()),
      () => ({
        events: ['content.published'],
      }),
    );
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
    const { after } = await changeEntryOrFail(
      ctx,
      id,
      expectedVersion,
      (current) => statusChange(current, 'draft', ctx.services.clock.now()),
      (before) => ({
        events: before.status === 'published' ? ['content.unpublished'] : [],
      }),
    );
    return toEntryView(after);
  },
});
