import type { OperationContext } from '../core/context.ts';
import { PayloadTooLargeError } from '../core/errors.ts';
import { siteStateCollection, siteStateId } from '../core/site-state.ts';
import type { MediaLimits } from './limits.ts';

/**
 * Bytes used, one counter per site and one for the whole workspace (`media:…` documents of `site_state`).
 * Uploads reserve bytes as their stream grows with a conditional `$inc` (the filter says
 * "there is still room"), so two racing uploads can never push a counter past its limit, with no
 * transaction and no read-then-write. Trashed items count until they are purged.
 */
interface UsageDoc {
  _id: string;
  siteId: string | null;
  bytes: number;
}

interface Counter {
  id: string;
  siteId: string | null;
  limit: number | null;
}

/** Reserve ahead in steps, so a large upload costs a round trip per step, not per chunk. */
const RESERVATION_STEP = 4 * 1024 * 1024;

function usage(ctx: Pick<OperationContext, 'db'>) {
  return siteStateCollection<UsageDoc>(ctx.db);
}

export const siteCounterId = (siteId: string) => siteStateId('media', `site:${siteId}`);
export const WORKSPACE_COUNTER_ID = siteStateId('media', 'workspace');

function counters(ctx: Pick<OperationContext, 'site'>, limits: MediaLimits): Counter[] {
  return [
    { id: siteCounterId(ctx.site._id), siteId: ctx.site._id, limit: limits.siteLibraryBytes },
    { id: WORKSPACE_COUNTER_ID, siteId: null, limit: limits.workspaceLibraryBytes },
  ];
}

async function add(ctx: Pick<OperationContext, 'db'>, counter: Counter, bytes: number): Promise<boolean> {
  if (counter.limit === null || bytes <= 0) {
    await usage(ctx).updateOne({ _id: counter.id }, { $inc: { bytes }, $setOnInsert: { siteId: counter.siteId } }, { upsert: true });
    return true;
  }
  if (bytes > counter.limit) return false;
  const result = await usage(ctx).updateOne({ _id: counter.id, bytes: { $lte: counter.limit - bytes } }, { $inc: { bytes } });
  return result.modifiedCount === 1;
}

/** Gives bytes back to every counter (purge, or an upload that failed after reserving). */
export async function releaseBytes(ctx: Pick<OperationContext, 'db' | 'site'>, bytes: number): Promise<void> {
  if (bytes <= 0) return;
  for (const counter of counters(ctx, { siteLibraryBytes: null, workspaceLibraryBytes: null } as MediaLimits)) {
    await add(ctx, counter, -bytes);
  }
}

export async function usedBytes(ctx: Pick<OperationContext, 'db' | 'site'>): Promise<{ site: number; workspace: number }> {
  const of = async (id: string) => (await usage(ctx).findOne({ _id: id }))?.bytes ?? 0;
  const [site, workspace] = await Promise.all([of(siteCounterId(ctx.site._id)), of(WORKSPACE_COUNTER_ID)]);
  return { site, workspace };
}

/** One upload's hold on the quota. Call `cover(total)` as bytes arrive, then `settle` or `release`. */
export class QuotaReservation {
  private reserved = 0;
  private readonly counters: Counter[];

  constructor(
    private readonly ctx: Pick<OperationContext, 'db' | 'site'>,
    limits: MediaLimits,
  ) {
    this.counters = counters(ctx, limits);
  }

  /** Creates missing counters at zero, so the conditional `$inc` has a document to match. */
  async open(): Promise<void> {
    for (const counter of this.counters) {
      await usage(this.ctx).updateOne({ _id: counter.id }, { $setOnInsert: { siteId: counter.siteId, bytes: 0 } }, { upsert: true });
    }
  }

  /** Makes sure at least `total` bytes are held; 413 when a counter has no room left. */
  async cover(total: number): Promise<void> {
    const missing = total - this.reserved;
    if (missing <= 0) return;
    // Try a step ahead first; near the limit fall back to exactly what is needed, so a file that
    // fits exactly is accepted.
    if (missing < RESERVATION_STEP && (await this.take(RESERVATION_STEP))) return;
    if (await this.take(missing)) return;
    throw new PayloadTooLargeError('Quota exceeded: mediaBytes (media library quota)');
  }

  private async take(bytes: number): Promise<boolean> {
    const taken: Counter[] = [];
    for (const counter of this.counters) {
      if (!(await add(this.ctx, counter, bytes))) {
        for (const done of taken) await add(this.ctx, done, -bytes);
        return false;
      }
      taken.push(counter);
    }
    this.reserved += bytes;
    return true;
  }

  /** Keeps exactly `size` bytes (the stored file) and returns the rest of the step. */
  async settle(size: number): Promise<void> {
    const extra = this.reserved - size;
    this.reserved = size;
    await releaseBytes(this.ctx, extra);
  }

  async release(): Promise<void> {
    const held = this.reserved;
    this.reserved = 0;
    await releaseBytes(this.ctx, held);
  }
}
