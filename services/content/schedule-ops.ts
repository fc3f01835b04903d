import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { BadRequestError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import type { EntryDoc } from './model.ts';
import { EntryView, toEntryView } from './entry-view.ts';
import { mutateEntry } from './entries.ts';
import { afterEntryWrite } from './entry-effects.ts';
import { cancelSchedule, startSchedule } from './schedule.ts';

const DateOrNull = z.iso.datetime({ offset: true }).nullable();

export const scheduleEntryOp = defineOperation({
  id: 'content.schedule',
  surface: 'manage',
  method: 'PUT',
  path: '/content/:id/schedule',
  summary: 'Set or cancel (null) the publish and unpublish dates',
  description:
    'At publishOn the working revision is published; at unpublishOn the entry returns to draft. ' +
    'While waiting to be published the entry is `scheduled`. A new schedule replaces the previous one.',
  requires: ['content:update', 'content:publish'],
  input: z.object({
    id: z.string(),
    publishOn: DateOrNull,
    unpublishOn: DateOrNull,
    expectedVersion: z.number().int().min(0).optional(),
  }),
  output: EntryView,
  async handler(ctx, { id, publishOn, unpublishOn, expectedVersion }) {
    const publishDate = publishOn ? new Date(publishOn) : null;
    const unpublishDate = unpublishOn ? new Date(unpublishOn) : null;
    if (publishDate && unpublishDate && unpublishDate <= publishDate) {
      throw new BadRequestError('unpublishOn: must be after publishOn');
    }
    const token = newId();
    const { before, after } = await mutateEntry(ctx, id, expectedVersion, (current) => {
      const set: Partial<EntryDoc> = {
        schedule: publishDate || unpublishDate ? { publishOn: publishDate, unpublishOn: unpublishDate, token } : null,
      };
      if (publishDate && current.status !== 'published') set.status = 'scheduled';
      if (!publishDate && current.status === 'scheduled') set.status = 'draft';
      return set;
    });
    if (after.schedule) {
      await startSchedule(ctx, { entryId: id, token, publishOn, unpublishOn });
    } else if (before.schedule) {
      await cancelSchedule(ctx, id);
    }
    await afterEntryWrite(ctx, after, { revision: before.status !== after.status, events: ['content.updated'] });
    return toEntryView(after);
  },
});
