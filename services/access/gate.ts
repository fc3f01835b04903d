import type { OperationContext, Services } from '../core/context.ts';
import { authenticateOAuthToken, isOAuthAccessToken } from '../oauth/authenticate.ts';
import type { Operation, Surface } from '../core/operation.ts';
import type { SiteScope } from '../platform/tenancy.ts';
import { anonymous, type Principal } from '../core/principal.ts';
import { ForbiddenError, NotFoundError, TooManyRequestsError, UnauthorizedError } from '../core/errors.ts';
import { countRequest } from '../platform/quota-guard.ts';
import { workspaceLimit } from '../platform/quota-model.ts';
import { createStateReader } from './state-reader.ts';
import { dropCounterWindowsBefore } from './site-settings-store.ts';
import { createKeyAuthenticator, type KeyLimits } from './key-auth.ts';
import type { Credentials } from './credentials.ts';
import { createSessionAuthenticator } from './session-auth.ts';
import { assertSameSiteOrigin } from './origin-check.ts';
import { exceeded, purgeOldWindows, rateLimitHeaders, type WindowResult } from './rate-limit.ts';
import { clearSessionCookie, sessionCookie } from './session-cookie.ts';
import { SESSION_COOKIE } from './sessions.ts';

export type { Credentials };

/**
 * The access feature's single entry point for the HTTP and MCP surfaces: who is calling, and may
 * this call go ahead now (switches, rate limits). Returns headers to add to the response.
 */
export interface AccessGate {
  authenticate(surface: Surface, credentials: Credentials, scope: SiteScope): Promise<Principal>;
  admit(ctx: OperationContext, operation: Operation): Promise<Record<string, string>>;
  /** Response headers for what the operation asked of its surface (a session started or ended). */
  finish(ctx: OperationContext): Record<string, string>;
  /**
   * Synchronous, no database: may this public read be answered from the cache-hit lane, skipping
   * `authenticate` and `admit`? Only when they would let it through with nothing to count: an
   * anonymous caller (no session cookie), an operation without a limit of its own, a workspace
   * without a requests-per-minute quota, and the site's access state held under the change feed
   * with the Public API on. Otherwise false, and the request takes the full path.
   */
  admitsReadyAnswer(scope: SiteScope, operation: Operation, cookies: Record<string, string | undefined>): boolean;
}

/** Extra limiter for `heavy: true` operations (uploads, activations, static export), per caller. */
export const HEAVY_LIMIT_PER_MIN = 10;

/** Until the access feature supplies a gate, nobody but anonymous public readers gets in. */
export function createDenyAllGate(_services: Services): AccessGate {
  return {
    async authenticate(surface) {
      if (surface === 'public' || surface === 'comments') return anonymous;
      throw new UnauthorizedError();
    },
    async admit() {
      return {};
    },
    finish() {
      return {};
    },
    admitsReadyAnswer() {
      return false;
    },
  };
}

/** The real gate: bearer keys on `manage`, cookie sessions on `admin` (and for previews on `public`). */
export function createAccessGate(services: Services): AccessGate {
  const readState = createStateReader(services.changeFeed, (dbName) => services.workspaceDb({ dbName }));
  const authenticateKey = createKeyAuthenticator(services, readState);
  const authenticateSession = createSessionAuthenticator(services, readState);
  const pending = new WeakMap<Principal, KeyLimits>();
  const oauthLimits = new WeakMap<Principal, number>();
  const lastPurge = new Map<string, number>();

  return {
    async authenticate(surface, credentials, scope) {
      if (surface === 'manage' && isOAuthAccessToken(credentials.authorization)) {
        const state = await readState(services.workspaceDb(scope.workspace), scope.site._id);
        // The switch governs every way into the Management API, OAuth grants included.
        if (!state.keys.enabled) throw new ForbiddenError();
        const principal = await authenticateOAuthToken(services, scope, credentials.authorization, credentials.resources ?? []);
        if (!principal) throw new UnauthorizedError();
        oauthLimits.set(principal, state.keys.defaultRateLimitPerMin);
        return principal;
      }
      if (surface === 'manage') {
        const { principal, limits } = await authenticateKey(credentials, scope);
        pending.set(principal, limits);
        return principal;
      }
      if (surface === 'public') {
        const state = await readState(services.workspaceDb(scope.workspace), scope.site._id);
        // Contract 4.3: when the API is not public, every endpoint answers 404.
        if (!state.publicEnabled) throw new NotFoundError();
        return authenticateSession(credentials.cookies, scope);
      }
      if (surface === 'comments') {
        const state = await readState(services.workspaceDb(scope.workspace), scope.site._id);
        // Its own switch: a site can keep its content public and close comment submission. With
        // the Public API off no entry is public, so there is nothing to comment on either.
        if (!state.commentsEnabled || !state.publicEnabled) throw new NotFoundError();
        return anonymous;
      }
      if (credentials.cookies[SESSION_COOKIE]) assertSameSiteOrigin(services.config, scope, credentials.method, credentials.origin);
      return authenticateSession(credentials.cookies, scope);
    },

    async admit(ctx, operation) {
      const headers: Record<string, string> = {};

      const now = services.clock.now();
      const siteId = ctx.site._id;
      // The workspace's `requestsPerMinute` quota: every key, token and public call together
      // (the admin UI's own session calls are not metered). One write per request while set.
      if (operation.surface !== 'admin') await countRequest(ctx, now);
      const results: WindowResult[] = [];
      const limits = pending.get(ctx.principal);
      if (limits) {
        const keyLimit = limits.key.rateLimitPerMin ?? limits.state.keys.defaultRateLimitPerMin;
        const resetSeconds = limits.resetSeconds;
        results.push({ name: 'key', limit: keyLimit, count: limits.keyCount, resetSeconds });
        // The per-IP ceiling never undercuts a key's own, higher limit.
        results.push({ name: 'ip', limit: Math.max(keyLimit, limits.state.keys.defaultRateLimitPerMin), count: limits.ipCount, resetSeconds });
      }
      const oauthLimit = oauthLimits.get(ctx.principal);
      if (oauthLimit !== undefined) {
        results.push(await services.rateCounters.hit(ctx.db, siteId, 'key', callerBucket(ctx), oauthLimit, now));
      }
      if (operation.rateLimit) {
        results.push(await services.rateCounters.hit(ctx.db, siteId, 'op', `op:${operation.id}:ip:${ctx.request.ip}`, operation.rateLimit.perMinute, now));
      }
      if (operation.heavy) {
        results.push(await services.rateCounters.hit(ctx.db, siteId, 'heavy', `heavy:${callerBucket(ctx)}`, HEAVY_LIMIT_PER_MIN, now));
      }
      if ((lastPurge.get(siteId) ?? 0) < now.getTime() - 60_000) {
        lastPurge.set(siteId, now.getTime());
        Promise.all([purgeOldWindows(ctx.db, siteId, now), dropCounterWindowsBefore(ctx.db, siteId, now.getTime() - 2 * 60_000)]).catch(
          (error) => services.log.warn({ err: error }, 'rate counter purge failed'),
        );
      }
      if (results.length === 0) return headers;
      const rate = rateLimitHeaders(results);
      const over = results.filter(exceeded);
      if (over.length > 0) {
        const error = new TooManyRequestsError(Math.max(...over.map((r) => r.resetSeconds)));
        Object.assign(error.headers, rate);
        throw error;
      }
      return { ...headers, ...rate };
    },

    finish(ctx): Record<string, string> {
      const { session } = ctx.effects;
      if (!session) return {};
      return { 'set-cookie': session === 'end' ? clearSessionCookie(services.config) : sessionCookie(session, services.config, services.clock.now()) };
    },

    admitsReadyAnswer(scope, operation, cookies) {
      if (operation.surface !== 'public' || operation.rateLimit || operation.heavy || cookies[SESSION_COOKIE]) return false;
      if (workspaceLimit(scope.workspace.quotas, 'requestsPerMinute') !== null) return false;
      return readState.peek(scope.workspace.dbName, scope.site._id)?.publicEnabled === true;
    },
  };
}

function callerBucket(ctx: OperationContext): string {
  const { principal } = ctx;
  if (principal.kind === 'key') return `key:${principal.keyId}`;
  if (principal.kind === 'user') return `user:${principal.userId}`;
  return `ip:${ctx.request.ip}`;
}
