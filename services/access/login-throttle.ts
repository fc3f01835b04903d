import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import type { Collection } from 'mongodb';
import type { OperationContext } from '../core/context.ts';
import { TooManyRequestsError } from '../core/errors.ts';
import { accessCollections, type CounterDoc } from './model.ts';
import { unmap } from './ip-rules.ts';

/**
 * Sign-in throttling (docs/access.md, "Sign-in throttling"). Every attempt reserves its place in
 * each budget with an atomic `$inc` *before* the password is checked, so a concurrent burst gets
 * exactly the budget's password checks and no more. A refused attempt gives its places back (it
 * spent nothing), a failure keeps them, a success clears the pair's failures and gives back the
 * rest. Budgets, most specific first:
 * - an account from one address: a few attempts, then a doubling wait;
 * - one address, whatever the account: a larger budget per window;
 * - an account from every address together: a larger budget, then a wait that doubles up to a
 *   cap, so spread-out guessing is slowed. An address that signed in to the account before is not
 *   subject to it, so an attacker can slow strangers but never lock the owner out.
 */
export interface LoginBudget {
  /** Attempts a period allows before any wait. */
  free: number;
  periodMs: number;
  /**
   * After `free`: the k-th further attempt waits until the period's first attempt + the sum of
   * min(1 min × 2^(j−1), `capMs`) for j = 1…k. Without it, the rest of the period is closed.
   */
  backoffCapMs?: number;
}

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

export const LOGIN_BUDGETS = {
  pair: { free: 5, periodMs: DAY_MS, backoffCapMs: Number.POSITIVE_INFINITY },
  address: { free: 30, periodMs: 15 * MINUTE_MS },
  account: { free: 20, periodMs: DAY_MS, backoffCapMs: 15 * MINUTE_MS },
} as const satisfies Record<string, LoginBudget>;

/** How long an address that signed in to an account stays exempt from that account's budget. */
export const KNOWN_ADDRESS_MS = 30 * DAY_MS;

/** When the `n`-th attempt of a period that started at `since` may run (epoch ms; 0: at once). */
export function attemptAllowedAt(budget: LoginBudget, n: number, since: number, periodEnd: number): number {
  if (n <= budget.free) return 0;
  if (budget.backoffCapMs === undefined) return periodEnd;
  let at = since;
  for (let k = 1; k <= n - budget.free && at < periodEnd; k++) at += Math.min(MINUTE_MS * 2 ** (k - 1), budget.backoffCapMs);
  return Math.min(at, periodEnd);
}

/**
 * The address a sign-in is counted under: IPv4 per address, IPv6 per /64 (what one subscriber is
 * usually given), so walking through one's own addresses does not buy new budgets.
 */
export function loginAddress(ip: string): string {
  const address = unmap(ip.replace(/%.*$/, ''));
  if (isIP(address) !== 6) return address;
  const [head, tail] = address.split('::');
  const groups = (part: string | undefined) => (part ? part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])) : []);
  const left = groups(head);
  const right = groups(tail);
  const all = tail === undefined ? left : [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${all
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

const digest = (...parts: string[]) => createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 22);

interface Place {
  id: string;
  budget: LoginBudget;
  periodEnd: number;
}

/** The one sign-in attempt in flight: what a success has to settle. */
export interface LoginAttempt {
  succeeded(): Promise<void>;
}

/** Reserves this attempt in every budget that applies, or refuses it (429, `Retry-After`) with nothing spent. */
export async function reserveLoginAttempt(ctx: OperationContext, email: string): Promise<LoginAttempt> {
  const now = ctx.services.clock.now().getTime();
  const siteId = ctx.site._id;
  const address = loginAddress(ctx.request.ip);
  const counters = accessCollections(ctx.db).counters;
  const place = (kind: keyof typeof LOGIN_BUDGETS, subject: string): Place => {
    const budget = LOGIN_BUDGETS[kind];
    const start = Math.floor(now / budget.periodMs) * budget.periodMs;
    return { id: `${siteId}:login:${kind}:${subject}:${start}`, budget, periodEnd: start + budget.periodMs };
  };
  const knownId = `${siteId}:login:known:${digest(email, address)}`;
  const known = (await counters.findOne({ _id: knownId, expiresAt: { $gt: new Date(now) } }, { projection: { _id: 1 } })) !== null;
  const places = [place('pair', digest(email, address)), place('address', digest(address)), ...(known ? [] : [place('account', digest(email))])];

  // One after another, most specific first: an attempt refused by its pair never touches the
  // account's budget, so a burst from one address cannot spend what other addresses rely on.
  const taken: Place[] = [];
  for (const p of places) {
    const { n, since } = await take(counters, p, siteId, now);
    taken.push(p);
    const allowedAt = attemptAllowedAt(p.budget, n, since, p.periodEnd);
    if (allowedAt > now) {
      await Promise.all(taken.map((t) => counters.updateOne({ _id: t.id }, { $inc: { n: -1 } })));
      throw new TooManyRequestsError((allowedAt - now) / 1000);
    }
  }
  return {
    async succeeded() {
      const [pair, ...others] = places;
      await Promise.all([
        counters.deleteOne({ _id: pair.id }),
        ...others.map((p) => counters.updateOne({ _id: p.id, n: { $gt: 0 } }, { $inc: { n: -1 } })),
        counters.updateOne({ _id: knownId }, { $set: { siteId, n: 1, expiresAt: new Date(now + KNOWN_ADDRESS_MS) } }, { upsert: true }),
      ]);
    },
  };
}

/** This attempt's place in a budget's period (1 = first) and when the period's first attempt came. */
async function take(counters: Collection<CounterDoc>, p: Place, siteId: string, now: number): Promise<{ n: number; since: number }> {
  const run = () =>
    counters.findOneAndUpdate(
      { _id: p.id },
      { $inc: { n: 1 }, $setOnInsert: { siteId, since: new Date(now), expiresAt: new Date(p.periodEnd) } },
      { upsert: true, returnDocument: 'after', projection: { n: 1, since: 1 } },
    );
  let row: CounterDoc | null;
  try {
    row = await run();
  } catch (error) {
    // Two first attempts racing on the upsert: the loser increments the row the winner made.
    if ((error as { code?: number }).code !== 11000) throw error;
    row = await run();
  }
  return { n: row?.n ?? 1, since: row?.since?.getTime() ?? now };
}
