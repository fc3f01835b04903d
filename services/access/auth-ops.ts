import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { defineOperation } from '../core/operation.ts';
import { UnauthorizedError } from '../core/errors.ts';
import { CapabilitySchema } from '../core/capabilities.ts';
import { decoyHash, verifyPassword } from './passwords.ts';
import { createSession, deleteSession } from './sessions.ts';
import { reserveLoginAttempt } from './login-throttle.ts';
import { findUserByEmail, normalizeEmail } from './users.ts';
import { loadUserAccess } from './user-access.ts';
import { writeFailureAudit } from './audit.ts';
import type { UserDoc } from './model.ts';
import { readAccessState } from './site-settings-store.ts';
import { hasTwoFactor, twoFactorRequiredFor, verifySecondFactor } from './two-factor.ts';

const Me = z.object({
  user: z.object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    role: z.string(),
    platformOperator: z.boolean(),
    capabilities: z.array(CapabilitySchema),
    /** `pending`: the account must switch two-factor sign-in on before it can do anything else. */
    twoFactor: z.object({ enabled: z.boolean(), required: z.boolean(), pending: z.boolean() }),
  }),
});

async function describeUser(ctx: OperationContext, userId: string) {
  const access = await loadUserAccess(ctx.db, ctx.site._id, userId);
  if (!access) throw new UnauthorizedError();
  const { user } = access;
  const required = twoFactorRequiredFor(user, (await readAccessState(ctx.db, ctx.site._id)).twoFactorRequired);
  const pending = required && !hasTwoFactor(user);
  return {
    user: {
      id: user._id,
      email: user.email,
      name: user.name,
      role: user.role,
      platformOperator: user.platformOperator,
      capabilities: pending ? [] : [...access.capabilities].sort(),
      twoFactor: { enabled: hasTwoFactor(user), required, pending },
    },
  };
}

/** Why the second factor fails (a failure row's reason), or null when it is off or right. */
async function secondFactorProblem(ctx: OperationContext, user: UserDoc, code: string | undefined): Promise<string | null> {
  if (!hasTwoFactor(user)) return null;
  if (!code) return 'code-missing';
  return (await verifySecondFactor(ctx, user, code)) ? null : 'bad-code';
}

export const loginOp = defineOperation({
  id: 'auth.login',
  surface: 'admin',
  method: 'POST',
  path: '/auth/login',
  summary: 'Sign in with email, password and (when two-factor sign-in is on) a code; sets an HttpOnly session cookie',
  description:
    "An account with two-factor sign-in on needs `code`: the authenticator's current code (each accepted once) or one of its recovery codes (each usable once). Any failure is the same 401.",
  requires: 'public',
  events: ['auth.login'],
  // An account event: the row names the user who signed in (the caller is still anonymous).
  audit: { kind: 'user' },
  input: z.object({ email: z.string().min(1).max(254), password: z.string().min(1).max(512), code: z.string().trim().max(32).optional() }),
  output: Me,
  async handler(ctx, { email, password, code }) {
    const normalized = normalizeEmail(email);
    // The attempt is counted before the password is checked (429 past the budgets); a failure
    // keeps its place, so a concurrent burst gets no more checks than the budget.
    const attempt = await reserveLoginAttempt(ctx, normalized);
    const user = await findUserByEmail(ctx, normalized);
    // An unknown account still pays for one hash, so timing does not tell which emails exist.
    const ok = await verifyPassword(password, user?.passwordHash ?? (await decoyHash()));
    // The second factor is asked only after the password, and every failure answers the same 401.
    const reason = !user ? 'unknown-account' : !ok ? 'bad-password' : user.disabled ? 'disabled' : await secondFactorProblem(ctx, user, code);
    if (!user || reason) {
      await writeFailureAudit(ctx.db, ctx.site._id, ctx.services.clock.now(), {
        action: 'login.failed',
        userId: user?._id ?? null,
        ip: ctx.request.ip,
        reason,
      });
      throw new UnauthorizedError();
    }
    await attempt.succeeded();
    // A fresh token on every sign-in: no session fixation.
    ctx.effects.session = await createSession(ctx.db, ctx.site._id, user._id, ctx.services.clock.now(), undefined, {
      userAgent: ctx.request.userAgent,
      ip: ctx.request.ip,
    });
    await ctx.emit('auth.login', { userId: user._id });
    return describeUser(ctx, user._id);
  },
});

export const logoutOp = defineOperation({
  id: 'auth.logout',
  surface: 'admin',
  method: 'POST',
  path: '/auth/logout',
  summary: 'End the current session',
  requires: 'authenticated',
  events: ['auth.logout'],
  status: 204,
  input: z.object({}),
  output: z.void(),
  async handler(ctx) {
    if (ctx.principal.kind !== 'user') throw new UnauthorizedError();
    await deleteSession(ctx.db, ctx.site._id, ctx.principal.sessionId);
    ctx.effects.session = 'end';
    await ctx.emit('auth.logout', { userId: ctx.principal.userId });
  },
});

export const meOp = defineOperation({
  id: 'auth.me',
  surface: 'admin',
  method: 'GET',
  path: '/auth/me',
  summary: 'The signed-in user and their effective capabilities',
  requires: 'authenticated',
  input: z.object({}),
  output: Me,
  async handler(ctx) {
    if (ctx.principal.kind !== 'user') throw new UnauthorizedError();
    return describeUser(ctx, ctx.principal.userId);
  },
});

export const authOperations = [loginOp, logoutOp, meOp];
