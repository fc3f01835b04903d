import type { OperationContext } from '../core/context.ts';
import { TooManyRequestsError } from '../core/errors.ts';
import { accessCollections } from './model.ts';

/** Failed sign-ins allowed per 15 minutes, per account and per client IP. */
export const LOGIN_WINDOW_MS = 15 * 60_000;
export const LOGIN_FAILURES_PER_ACCOUNT = 5;
export const LOGIN_FAILURES_PER_IP = 30;

function buckets(ctx: OperationContext, email: string) {
  const start = Math.floor(ctx.services.clock.now().getTime() / LOGIN_WINDOW_MS) * LOGIN_WINDOW_MS;
  return {
    start,
    account: { bucket: `login:acct:${email}`, id: `${ctx.site._id}:login:acct:${email}:${start}`, limit: LOGIN_FAILURES_PER_ACCOUNT },
    ip: { bucket: `login:ip:${ctx.request.ip}`, id: `${ctx.site._id}:login:ip:${ctx.request.ip}:${start}`, limit: LOGIN_FAILURES_PER_IP },
  };
}

/** Refuses before the password is even checked once either budget of failures is spent. */
export async function assertLoginAllowed(ctx: OperationContext, email: string): Promise<void> {
  const b = buckets(ctx, email);
  const rows = await accessCollections(ctx.db).counters.find({ _id: { $in: [b.account.id, b.ip.id] } }).toArray();
  const count = (id: string) => rows.find((row) => row._id === id)?.n ?? 0;
  if (count(b.account.id) >= b.account.limit || count(b.ip.id) >= b.ip.limit) {
    throw new TooManyRequestsError((b.start + LOGIN_WINDOW_MS - ctx.services.clock.now().getTime()) / 1000);
  }
}

export async function recordLoginFailure(ctx: OperationContext, email: string): Promise<void> {
  const b = buckets(ctx, email);
  const now = ctx.services.clock.now();
  await Promise.all([
    ctx.services.rateCounters.hit(ctx.db, ctx.site._id, 'login', b.account.bucket, b.account.limit, now, LOGIN_WINDOW_MS),
    ctx.services.rateCounters.hit(ctx.db, ctx.site._id, 'login', b.ip.bucket, b.ip.limit, now, LOGIN_WINDOW_MS),
  ]);
}

export async function clearAccountFailures(ctx: OperationContext, email: string): Promise<void> {
  await accessCollections(ctx.db).counters.deleteOne({ _id: buckets(ctx, email).account.id });
}
