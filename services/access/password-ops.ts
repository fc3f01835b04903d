import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { defineOperation } from '../core/operation.ts';
import { BadRequestError, TooManyRequestsError, UnauthorizedError } from '../core/errors.ts';
import { recordChange } from '../audit/record.ts';
import { accessCollections, type UserDoc } from './model.ts';
import { hashPassword, verifyPassword } from './passwords.ts';
import { issueAccountToken, parseAccountToken, accountTokenMatches } from './account-tokens.ts';
import { accountLink, sendAccountMail } from './account-mail.ts';
import { endCredentialsAfterPasswordChange, findUserByEmail, normalizeEmail } from './users.ts';
import { counterId, raiseCounter } from './rate-limit.ts';
import { loginAddress } from './login-throttle.ts';

/**
 * Password reset and change (docs/accounts.md). A reset link is single-use and valid
 * `RESET_TTL_MS`; asking for one answers the same whether or not the address has an account, and
 * the mail is queued after the answer is decided, so timing tells nothing either.
 */
export const RESET_TTL_MS = 60 * 60 * 1000;
/** Reset requests per address (account e-mail) per hour, and per client address per hour. */
export const RESET_LIMITS = { perEmail: 3, perIp: 20, windowMs: 60 * 60 * 1000 } as const;

const digest = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 22);
const NewPassword = z.string().min(12).max(512);

/** Counts the request in both hourly budgets (whether or not the account exists) and refuses past either. */
async function countResetRequest(ctx: OperationContext, email: string): Promise<void> {
  const now = ctx.services.clock.now().getTime();
  const start = Math.floor(now / RESET_LIMITS.windowMs) * RESET_LIMITS.windowMs;
  const expiresAt = new Date(start + RESET_LIMITS.windowMs);
  const siteId = ctx.site._id;
  const [byEmail, byIp] = await Promise.all([
    raiseCounter(ctx.db, counterId(siteId, `reset:email:${digest(email)}`, start), 1, siteId, expiresAt),
    raiseCounter(ctx.db, counterId(siteId, `reset:ip:${digest(loginAddress(ctx.request.ip))}`, start), 1, siteId, expiresAt),
  ]);
  if (byEmail > RESET_LIMITS.perEmail || byIp > RESET_LIMITS.perIp) throw new TooManyRequestsError((start + RESET_LIMITS.windowMs - now) / 1000);
}

async function mailReset(ctx: OperationContext, user: UserDoc): Promise<void> {
  const now = ctx.services.clock.now();
  const { id, token, secretHash } = issueAccountToken(now);
  await accessCollections(ctx.db).passwordResets.insertOne({
    _id: id,
    siteId: ctx.site._id,
    userId: user._id,
    secretHash,
    expiresAt: new Date(now.getTime() + RESET_TTL_MS),
    usedAt: null,
    createdAt: now,
  });
  await sendAccountMail(ctx, {
    key: `password-reset:${id}`,
    template: 'password-reset',
    to: user.email,
    data: { userName: user.name, resetUrl: accountLink(ctx, 'reset-password', token), expiresInMinutes: String(RESET_TTL_MS / 60_000) },
  });
}

export const requestPasswordResetOp = defineOperation({
  id: 'auth.passwordReset.request',
  surface: 'admin',
  method: 'POST',
  path: '/auth/password-reset',
  summary: 'Ask for a password reset link by e-mail; the answer is the same whether or not the address has an account',
  description: `At most ${RESET_LIMITS.perEmail} requests per address and ${RESET_LIMITS.perIp} per client address an hour (429). A disabled account gets no mail.`,
  requires: 'public',
  status: 202,
  audit: { action: 'password.reset.requested', kind: 'users' },
  input: z.object({ email: z.string().min(1).max(254) }).strict(),
  output: z.object({ accepted: z.literal(true) }),
  async handler(ctx, { email }) {
    const normalized = normalizeEmail(email);
    await countResetRequest(ctx, normalized);
    const user = await findUserByEmail(ctx, normalized);
    if (user && !user.disabled) {
      recordChange(ctx, { action: 'password.reset.requested', target: { kind: 'users', id: user._id } });
      // Not awaited: the answer must not take longer when the account exists. The mail row is
      // written before anything can be lost; a failure here is logged.
      mailReset(ctx, user).catch((error) =>
        ctx.services.log.error({ err: error instanceof Error ? error.message : String(error), requestId: ctx.request.id }, 'password reset mail not queued'),
      );
    }
    return { accepted: true as const };
  },
});

export const confirmPasswordResetOp = defineOperation({
  id: 'auth.passwordReset.confirm',
  surface: 'admin',
  method: 'POST',
  path: '/auth/password-reset/confirm',
  summary: 'Set a new password with a reset link; every session and OAuth grant of the account ends',
  description: 'A used, expired or unknown token is the same 400 and changes nothing. Two-factor sign-in stays on: the next sign-in still needs a code.',
  requires: 'public',
  rateLimit: { perMinute: 10, by: 'ip' },
  audit: { action: 'password.reset.done', kind: 'users' },
  input: z.object({ token: z.string().min(1).max(200), password: NewPassword }).strict(),
  output: z.object({ id: z.string(), reset: z.literal(true) }),
  async handler(ctx, { token, password }) {
    const bad = () => new BadRequestError('token: invalid or expired');
    const parsed = parseAccountToken(token);
    if (!parsed) throw bad();
    const resets = accessCollections(ctx.db).passwordResets;
    const row = await resets.findOne({ _id: parsed.id, siteId: ctx.site._id });
    const now = ctx.services.clock.now();
    if (!row || !accountTokenMatches(parsed.secret, row.secretHash) || row.usedAt || row.expiresAt.getTime() <= now.getTime()) throw bad();
    const passwordHash = await hashPassword(password);
    // Single use: of two racing confirmations one takes the row, the other is refused.
    const taken = await resets.findOneAndUpdate({ _id: row._id, siteId: ctx.site._id, usedAt: null }, { $set: { usedAt: now } });
    if (!taken) throw bad();
    const user = await accessCollections(ctx.db).users.findOneAndUpdate(
      { _id: row.userId, siteId: ctx.site._id, disabled: { $ne: true } },
      { $set: { passwordHash, updatedAt: now } },
    );
    if (!user) throw bad();
    // Every other link of the account dies with this one.
    await resets.updateMany({ siteId: ctx.site._id, userId: row.userId, usedAt: null }, { $set: { usedAt: now } });
    await endCredentialsAfterPasswordChange(ctx, row.userId, now);
    return { id: row.userId, reset: true as const };
  },
});

export const changePasswordOp = defineOperation({
  id: 'auth.password.change',
  surface: 'admin',
  method: 'POST',
  path: '/auth/password',
  summary: 'Change your password with the current one; your other sessions and OAuth grants end, this session stays',
  requires: 'authenticated',
  audit: { action: 'password.changed', kind: 'users' },
  input: z.object({ currentPassword: z.string().min(1).max(512), password: NewPassword }).strict(),
  output: z.object({ id: z.string(), changed: z.literal(true) }),
  async handler(ctx, { currentPassword, password }) {
    if (ctx.principal.kind !== 'user') throw new UnauthorizedError();
    const users = accessCollections(ctx.db).users;
    const user = await users.findOne({ _id: ctx.principal.userId, siteId: ctx.site._id });
    if (!user) throw new UnauthorizedError();
    if (!(await verifyPassword(currentPassword, user.passwordHash))) throw new BadRequestError('currentPassword: not your current password');
    const now = ctx.services.clock.now();
    await users.updateOne(
      { _id: user._id, siteId: ctx.site._id, passwordHash: user.passwordHash },
      { $set: { passwordHash: await hashPassword(password), updatedAt: now } },
    );
    await endCredentialsAfterPasswordChange(ctx, user._id, now);
    return { id: user._id, changed: true as const };
  },
});

export const passwordOperations = [requestPasswordResetOp, confirmPasswordResetOp, changePasswordOp];
