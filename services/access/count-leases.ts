import type { Db } from 'mongodb';
import type { Logger } from 'pino';

/** Below this many requests left in a window nothing is leased: every request is counted in the database, in order. */
export const LEASE_FLOOR = 64;
const MAX_BLOCK = 1024;
const MAX_LEASES = 10_000;

/** Raises the window's counter fields by these amounts and answers their totals after the raise. */
export type ClaimCounts = (db: Db, siteId: string, window: number, increments: Record<string, number>) => Promise<Record<string, number>>;

interface Lease {
  /** Claimed positions not yet handed out, oldest block first, each `[next, end]`. */
  blocks: [number, number][];
  /** Positions left in `blocks`. */
  left: number;
  /** The claim in flight, if any. */
  claiming: Promise<void> | null;
  /** The field's total after this gateway's last claim: how much of the window is left. */
  lastTotal: number;
}

/**
 * Blocks of a site's per-minute counters leased by this gateway for a known key's requests, the
 * management lane's and the full path's (docs/access.md, "Counting without a round trip"). A
 * claim is one `$inc` of a counter field by the block size on the same document every other
 * request is counted on, so the positions `[total − size + 1, total]` it returns are this
 * gateway's alone; they are handed out one per request without a round trip, and the next block
 * is claimed before the current one is used up. Every served request holds a
 * unique position no greater than the limit, so a limit is never exceeded; a block is at most an
 * eighth of what the window has left (1,024 at most) and nothing is leased once fewer than
 * `LEASE_FLOOR` are left, so positions a gateway leased and did not use can make a key's refusals
 * start that many requests early, never late.
 */
export interface CountLeases {
  /** One position per field (`[field, limit]`), all or none; none also starts the claims that were missing. */
  take(db: Db, siteId: string, window: number, fields: readonly (readonly [string, number])[]): number[] | undefined;
  /**
   * `take`, waiting for the claims it started or found in flight instead of answering none (the
   * full path: a claim costs the round trip a count in the database would). None only when a field
   * is below `LEASE_FLOOR`, a claim failed or the window passed meanwhile: the caller then counts
   * in the database. Positions come from blocks in the order they were claimed, so one gateway's
   * requests of a key see their positions rise one by one.
   */
  takeOrClaim(db: Db, siteId: string, window: number, fields: readonly (readonly [string, number])[]): Promise<number[] | undefined>;
}

export function createCountLeases(claim: ClaimCounts, log: Logger): CountLeases {
  // By database name (any object for the database finds its leases: the lane's, the full path's
  // and an operation context's wrapper of it), site and field: no key string is built per request.
  let leases = new Map<string, Map<string, Map<string, Lease>>>();
  let leaseCount = 0;
  let leasesWindow = 0;

  const blockSize = (limit: number, lastTotal: number) => {
    const left = limit - lastTotal;
    return left < LEASE_FLOOR ? 0 : Math.min(MAX_BLOCK, Math.floor(left / 8));
  };

  function refill(db: Db, siteId: string, window: number, field: string, limit: number, lease: Lease) {
    const size = blockSize(limit, lease.lastTotal);
    if (lease.claiming || size === 0) return;
    lease.claiming = claim(db, siteId, window, { [field]: size }).then(
      (totals) => {
        const total = totals[field] ?? size;
        lease.blocks.push([total - size + 1, total]);
        lease.left += size;
        lease.lastTotal = total;
        lease.claiming = null;
      },
      (error: unknown) => {
        lease.claiming = null;
        log.warn({ err: error }, 'leasing a block of the rate counter failed');
      },
    );
  }

  function leaseOf(db: Db, siteId: string, field: string): Lease {
    let sites = leases.get(db.databaseName);
    if (!sites) leases.set(db.databaseName, (sites = new Map()));
    let fields = sites.get(siteId);
    if (!fields) sites.set(siteId, (fields = new Map()));
    let lease = fields.get(field);
    if (!lease) {
      fields.set(field, (lease = { blocks: [], left: 0, claiming: null, lastTotal: 0 }));
      leaseCount++;
    }
    return lease;
  }

  function take(db: Db, siteId: string, window: number, fields: readonly (readonly [string, number])[]): number[] | undefined {
    if (window !== leasesWindow || leaseCount > MAX_LEASES) {
      leases = new Map();
      leaseCount = 0;
      leasesWindow = window;
    }
    const held: Lease[] = [];
    let missing = false;
    for (const [field, limit] of fields) {
      const lease = leaseOf(db, siteId, field);
      held.push(lease);
      // Less than a block left: the next one is claimed while this one is used up (a claim's round
      // trip can take longer than a busy key needs to use half a block).
      if (lease.left <= blockSize(limit, lease.lastTotal)) refill(db, siteId, window, field, limit, lease);
      if (lease.left === 0) missing = true;
    }
    if (missing) return undefined;
    return held.map((lease) => {
      const block = lease.blocks[0];
      const position = block[0]++;
      lease.left--;
      if (block[0] > block[1]) lease.blocks.shift();
      return position;
    });
  }

  return {
    take,
    async takeOrClaim(db, siteId, window, fields) {
      const positions = take(db, siteId, window, fields);
      if (positions) return positions;
      const claims = fields.map(([field]) => leaseOf(db, siteId, field)).flatMap((lease) => (lease.left === 0 ? [lease.claiming] : []));
      if (claims.some((claiming) => claiming === null)) return undefined;
      await Promise.all(claims);
      return window === leasesWindow ? take(db, siteId, window, fields) : undefined;
    },
  };
}
