import type { Config } from '../core/config.ts';
import type { OperationContext } from '../core/context.ts';
import { randomToken } from '../core/ids.ts';
import { SESSION_COOKIE, SESSION_TTL_MS } from './sessions.ts';

export const LOGIN_OPERATION = 'auth.login';
export const LOGOUT_OPERATION = 'auth.logout';

/**
 * Handlers never touch HTTP, so the gate's `admit` (which returns response headers) sets the cookie
 * of a login before the handler runs, with a fresh token; the login handler binds that token to a
 * session row only when the password is right. A failed login leaves the browser holding a token
 * no session row matches, which is the same as no cookie. A fresh token on every login also rules
 * out session fixation.
 */
const issued = new WeakMap<OperationContext, string>();

export function issueSessionCookie(ctx: OperationContext, config: Config): string {
  const token = randomToken(32);
  issued.set(ctx, token);
  return serializeCookie(token, Math.floor(SESSION_TTL_MS / 1000), config);
}

export function clearSessionCookie(config: Config): string {
  return serializeCookie('', 0, config);
}

export function issuedSessionToken(ctx: OperationContext): string | undefined {
  return issued.get(ctx);
}

function serializeCookie(value: string, maxAge: number, config: Config): string {
  const secure = config.TRUST_PROXY || config.PUBLIC_BASE_URL?.startsWith('https:') ? '; Secure' : '';
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure}`;
}
