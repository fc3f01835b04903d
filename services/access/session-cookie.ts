import type { Config } from '../core/config.ts';
import { behindProxy } from '../core/proxy-trust.ts';
import { SESSION_COOKIE } from './sessions.ts';

/** The session cookie for a session an operation started (`ctx.effects.session`). */
export function sessionCookie(session: { token: string; expiresAt: Date }, config: Config, now: Date): string {
  return serializeCookie(session.token, Math.max(0, Math.floor((session.expiresAt.getTime() - now.getTime()) / 1000)), config);
}

export function clearSessionCookie(config: Config): string {
  return serializeCookie('', 0, config);
}

function serializeCookie(value: string, maxAge: number, config: Config): string {
  const secure = behindProxy(config.TRUST_PROXY) || config.PUBLIC_BASE_URL?.startsWith('https:') ? '; Secure' : '';
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure}`;
}
