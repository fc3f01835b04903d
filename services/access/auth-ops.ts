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

const Me = z.object({
  user: z.object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    role: z.string(),
    platformOperator: z.boolean(),
    capabilities: z.array(CapabilitySchema),
  }),
});

async function describeUser(ctx: OperationContext, userId: string) {
  const access = await loadUserAccess(ctx.db, ctx.site._id, userId);
  if (!access) throw new UnauthorizedError();
  const { user } = access;
  return {
    user: {
      id: user._id,
      email: user.email,
      name: user.name,
      role: user.role,
      platformOperator: user.platformOperator,
      capabilities: [...access.capabilities].sort(),
    },
  };
}

export const loginOp = defineOperation({
  id: 'auth.login',
  surface: 'admin',
  method: 'POST',
  path: '/auth/login',
  summary: 'Sign in with email and password; sets an HttpOnly session cookie',
  requires: 'public',
  events: ['auth.login'],
  // An account event: the row names the user who signed in (the caller is still anonymous).
  audit: { kind: 'user' },
  input: z.object({ email: z.string().min(1).max(254), password: z.string().min(1).max(512) }),
  output: Me,
  async handler(ctx, { email, password }) {
    const normalized = normalizeEmail(email);
    // The attempt is counted before the password is checked (429 past the budgets); a failure
    // keeps its place, so a concurrent burst gets no more checks than the budget.
    const attempt = await reserveLoginAttempt(ctx, normalized);
    const user = await findUserByEmail(ctx, normalized);
    // An unknown account still pays for one hash, so timing does not tell which emails exist.
    const ok = await verifyPassword(password, user?.passwordHash ?? (await decoyHash()));
    if (!user || !ok) {
      await writeFailureAudit(ctx.db, ctx.site._id, ctx.services.clock.now(), {
        action: 'login.failed',
        userId: user?._id ?? null,
        ip: ctx.request.ip,
        reason: user ? 'bad-password' : 'unknown-account',
      });
      throw new UnauthorizedError();
    }
    await attempt.succeeded();
    // A fresh token on every sign-in: no session fixation.
    ctx.effects.session = await createSession(ctx.db, ctx.site._id, user._id, ctx.services.clock.now());
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
