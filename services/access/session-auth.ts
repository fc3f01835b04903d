import type { Db } from 'mongodb';
import type { Services } from '../core/context.ts';
import type { SiteScope } from '../tenancy/site-resolver.ts';
import type { AccessState } from './site-settings-store.ts';
import type { Capability } from '../core/capabilities.ts';
import { anonymous, type Principal } from '../core/principal.ts';
import { readSession, SESSION_COOKIE, touchSession } from './sessions.ts';
import { hasTwoFactor, twoFactorRequiredFor } from './two-factor.ts';
import { loadUserAccess } from './user-access.ts';

interface CachedUser {
  version: number;
  access: { capabilities: Set<Capability>; platformOperator: boolean; twoFactor: boolean } | null;
}

/** A session's last request is written at most this often (the sessions list shows it). */
const LAST_SEEN_EVERY_MS = 60_000;

/**
 * Cookie sessions: the session row is read on every request (logout and expiry act at once); the
 * user's capabilities are cached per gateway while the site's access version is unchanged.
 * No cookie, or a dead one, is the anonymous principal: operations that need more answer 401.
 */
export function createSessionAuthenticator(services: Services, readState: (db: Db, siteId: string) => Promise<AccessState>) {
  const cache = new Map<string, CachedUser>();

  async function userAccess(db: Db, siteId: string, userId: string, version: number) {
    const id = `${siteId}:${userId}`;
    const hit = cache.get(id);
    if (hit && hit.version === version) return hit.access;
    const loaded = await loadUserAccess(db, siteId, userId);
    const access = loaded ? { capabilities: loaded.capabilities, platformOperator: loaded.user.platformOperator, twoFactor: hasTwoFactor(loaded.user) } : null;
    if (cache.size > 10_000) cache.clear();
    cache.set(id, { version, access });
    return access;
  }

  return async function authenticateSession(cookies: Record<string, string | undefined>, scope: SiteScope): Promise<Principal> {
    const token = cookies[SESSION_COOKIE];
    if (!token) return anonymous;
    const db = services.workspaceDb(scope.workspace);
    const siteId = scope.site._id;
    const [session, state] = await Promise.all([readSession(db, siteId, token, services.clock.now()), readState(db, siteId)]);
    if (!session) return anonymous;
    const access = await userAccess(db, siteId, session.userId, state.version);
    if (!access) return anonymous;
    const now = services.clock.now();
    if (!session.lastSeenAt || now.getTime() - session.lastSeenAt.getTime() > LAST_SEEN_EVERY_MS) {
      touchSession(db, session._id, now).catch((error) =>
        services.log.warn({ err: error instanceof Error ? error.message : String(error) }, 'session last-seen not written'),
      );
    }
    // An account that must have a second factor and has none yet can only enrol (and see itself):
    // a password alone never reaches platform routes (docs/accounts.md).
    if (!access.twoFactor && twoFactorRequiredFor(access, state.twoFactorRequired)) {
      return { kind: 'user', userId: session.userId, sessionId: session._id, capabilities: new Set(), isPlatformOperator: false, twoFactorPending: true };
    }
    return {
      kind: 'user',
      userId: session.userId,
      sessionId: session._id,
      capabilities: access.capabilities,
      isPlatformOperator: access.platformOperator,
    };
  };
}
