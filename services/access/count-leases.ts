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
  claiming: boolean;
  /** The field's total after this gateway's last claim: how much of the window is left. */
  lastTotal: number;
}

/**
 * Blocks of a site's per-minute counters leased by this gateway for the management lane (docs/access.md,
 * "Held management reads"). A claim is one `$inc` of a counter field by the block size on the same
 * document every other request is counted on, so the positions `[total − size + 1, total]` it
 * returns are this gateway's alone; the lane hands them out one per request without a round trip,
 * and claims the next block before the current one is used up. Every served request holds a
 * unique position no greater than the limit, so a limit is never exceeded; a block is at most an
 * eighth of what the window has left (1,024 at most) and nothing is leased once fewer than
 * `LEASE_FLOOR` are left, so positions a gateway leased and did not use can make a key's refusals
 * start that many requests early, never late.
 */
export interface CountLeases {
  /** One position per field (`[field, limit]`), all or none; none also starts the claims that were missing. */
  take(db: Db, siteId: string, window: number, fields: readonly (readonly [string, number])[]): number[] | undefined;
}

export function createCountLeases(claim: ClaimCounts, log: Logger): CountLeases {
  // By database (the Db objects `services.workspaceDb` hands out are one per database, looked up by
  // identity), site and field: no key string is built on every held read.
  let leases = new Map<Db, Map<string, Map<string, Lease>>>();
  let leaseCount = 0;
  let leasesWindow = 0;

  const blockSize = (limit: number, lastTotal: number) => {
    const left = limit - lastTotal;
    return left < LEASE_FLOOR ? 0 : Math.min(MAX_BLOCK, Math.floor(left / 8));
  };

  function refill(db: Db, siteId: string, window: number, field: string, limit: number, lease: Lease) {
    const size = blockSize(limit, lease.lastTotal);
    if (lease.claiming || size === 0) return;
    lease.claiming = true;
    claim(db, siteId, window, { [field]: size }).then(
      (totals) => {
        const total = totals[field] ?? size;
        lease.blocks.push([total - size + 1, total]);
        lease.left += size;
        lease.lastTotal = total;
        lease.claiming = false;
      },
      (error) => {
        lease.claiming = false;
        log.warn({ err: error }, 'leasing a block of the rate counter failed');
      },
    );
  }

  function leaseOf(db: Db, siteId: string, field: string): Lease {
    let sites = leases.get(db);
    if (!sites) leases.set(db, (sites = new Map()));
    let fields = sites.get(siteId);
    if (!fields) sites.set(siteId, (fields = new Map()));
    let lease = fields.get(field);
    if (!lease) {
      fields.set(field, (lease = { blocks: [], left: 0, claiming: false, lastTotal: 0 }));
      leaseCount++;
    }
    return lease;
  }

  return {
    take(db, siteId, window, fields) {
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
    },
  };
}
