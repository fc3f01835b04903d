import { ENTRY_SCOPE } from './model.ts';
import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { BadRequestError, ConflictError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import type { EntryDoc } from './model.ts';
import { EntryView, toEntryView } from './entry-view.ts';
import { findEntryInScope } from './entries.ts';
import { changeEntryOrFail } from './write-path.ts';
import { restoreSchedule, startSchedule } from './schedule.ts';

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
  scope: ENTRY_SCOPE,
  events: ['content.updated'],
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
    // `scheduled` means "waiting for a date": a date already passed would leave nothing to wait for.
    if (publishDate && publishDate <= ctx.services.clock.now()) throw new BadRequestError('publishOn: must be in the future');
    if (publishDate && unpublishDate && unpublishDate <= publishDate) {
      throw new BadRequestError('unpublishOn: must be after publishOn');
    }
    const token = newId();
    const wanted = publishDate || unpublishDate;
    // Checked before Temporal is touched: a 404, 401 or stale version starts nothing.
    const current = await findEntryInScope(ctx, id);
    if (expectedVersion !== undefined && current.version !== expectedVersion) {
      throw new ConflictError(`Version mismatch: expected ${expectedVersion}, current ${current.version}`);
    }
    // The workflow starts BEFORE the entry carries its token: if the write then fails, the new
    // workflow finds a foreign token and does nothing, and the old schedule is put back.
    if (wanted) await startSchedule(ctx, { entryId: id, token, publishOn, unpublishOn });
    let result: Awaited<ReturnType<typeof changeEntryOrFail>>;
    try {
      result = await changeEntryOrFail(
        ctx,
        id,
        expectedVersion,
        (entry) => {
          const set: Partial<EntryDoc> = { schedule: wanted ? { publishOn: publishDate, unpublishOn: unpublishDate, token } : null };
          if (publishDate && entry.status !== 'published') set.status = 'scheduled';
          if (!publishDate && entry.status === 'scheduled') set.status = 'draft';
          return set;
        },
        () => ({ events: ['content.updated'] }),
      );
    } catch (error) {
      if (wanted) await restoreSchedule(ctx, current).catch((e) => ctx.services.log.warn({ err: e }, 'schedule restore failed'));
      throw error;
    }
    // A cancelled schedule's workflow is stopped by the write path AFTER the write: once the token
    // is gone a surviving workflow is a no-op.
    return toEntryView(result.after);
  },
});
