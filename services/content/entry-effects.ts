import type { OperationContext } from '../core/context.ts';
import type { EntryDoc } from './model.ts';
import { recordRevision } from './entries.ts';
import { bumpContentGeneration } from '../public-read/state.ts';

export type ContentEvent = 'content.created' | 'content.updated' | 'content.published' | 'content.unpublished' | 'content.deleted';

/** Event data: strings only, as the event catalog describes them. */
export function eventData(doc: EntryDoc): Record<string, string> {
  return { id: doc._id, type: doc.type, slug: doc.slug, locale: doc.locale, status: doc.status, version: String(doc.version) };
}

/**
 * What follows every entry write: a revision when the content or status changed, a new cache
 * generation when the public output may have changed, and the events.
 */
export async function afterEntryWrite(
  ctx: OperationContext,
  doc: EntryDoc,
  effects: { revision?: boolean; publicChange?: boolean; events: ContentEvent[] },
): Promise<void> {
  if (effects.revision) await recordRevision(ctx, doc);
  if (effects.publicChange) await bumpContentGeneration(ctx);
  for (const event of effects.events) await ctx.emit(event, eventData(doc));
}
