import type { OperationContext } from '../../services/core/context.ts';
import { invokeOperation } from '../../services/core/operation.ts';
import { createEntryOp } from '../../services/content/entries-write-ops.ts';
import { publishEntryOp } from '../../services/content/entries-publish-ops.ts';

/** `count` published entries (`bench-0` …) of the same size, so every read benchmark reads the same bytes. */
export async function seedPublishedEntries(ctx: OperationContext, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const entry = await invokeOperation(createEntryOp, ctx, {
      title: `Benchmark entry ${i}`,
      slug: `bench-${i}`,
      excerpt: 'A short summary of the entry.',
      blocks: { version: 1, blocks: [{ type: 'paragraph', text: 'Lorem ipsum dolor sit amet. '.repeat(8) }] },
      fields: { rank: i },
    });
    await invokeOperation(publishEntryOp, ctx, { id: entry.id });
  }
}
