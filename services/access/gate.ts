import type { OperationContext, Services } from '../core/context.ts';
import type { Operation, Surface } from '../core/operation.ts';
import type { SiteScope } from '../tenancy/site-resolver.ts';
import { anonymous, type Principal } from '../core/principal.ts';
import { ForbiddenError, NotFoundError, TooManyRequestsError, UnauthorizedError } from '../core/errors.ts';
import { countRequest } from '../tenancy/quota-guard.ts';
import { createStateReader } from './state-reader.ts';
import { dropCounterWindowsBefore } from './site-settings-store.ts';
import { createKeyAuthenticator, keyWindows, type KeyLimits } from './key-auth.ts';
import type { Credentials } from './credentials.ts';
import { createLaneAdmission, noLaneAdmission, type LaneAdmission } from './lane-admission.ts';
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
  /**
   * The site's Public API switch for what the site publishes outside `/api/v1` (media files, the
   * static export's preview): off → 404, exactly as the public surface answers.
   */
  assertPublicOpen(scope: SiteScope): Promise<void>;
  /**
   * Counts one operation against every limit that applies to it and refuses it (429) over any.
   * Called once per operation run: REST runs one per request, MCP and GraphQL one per tool call
   * or resolver, so each of them spends the budget.
   */
  admit(ctx: OperationContext, operation: Admitted): Promise<Record<string, string>>;
  /** Response headers for what the operation asked of its surface (a session started or ended). */
  finish(ctx: OperationContext): Record<string, string>;
  /** What the lanes in front of Fastify ask instead of `authenticate` + `admit`, over this gate's state (lane-admission.ts). */
  readonly lanes: LaneAdmission;
}

/** What `admit` reads of what it admits: an operation, or a plugin's agent tool described like one. */
export type Admitted = Pick<Operation, 'id' | 'surface' | 'rateLimit' | 'heavy'>;

/** Extra limiter for `heavy: true` operations (uploads, activations, static export), per caller. */
export const HEAVY_LIMIT_PER_MIN = 10;

/** Until the access feature supplies a gate, nobody but anonymous public readers gets in. */
export function createDenyAllGate(_services: Services): AccessGate {
  return {
    async authenticate(surface) {
      if (surface === 'public' || surface === 'comments') return anonymous;
      throw new UnauthorizedError();
    },
    async assertPublicOpen() {},
    async admit() {
      return {};
    },
    finish() {
      return {};
    },
    lanes: noLaneAdmission,
  };
}

/**
 * OAuth access tokens, read by the oauth feature (services/oauth/authenticate.ts). The wiring passes
 * it in, because oauth sits above access (its principals are users' current access).
 */
export interface OAuthTokens {
  isToken(authorization: string | undefined): boolean;
  authenticate(services: Services, scope: SiteScope, authorization: string | undefined, resources: readonly string[]): Promise<Principal | null>;
}

/** The real gate: bearer keys on `manage` (and OAuth tokens), cookie sessions on `admin` (and for previews on `public`). */
export function createAccessGate(services: Services, oauth: OAuthTokens): AccessGate {
  const readState = createStateReader(services.changeFeed, (dbName) => services.workspaceDb({ dbName }));
  const keys = createKeyAuthenticator(services, readState);
  const authenticateSession = createSessionAuthenticator(services, readState);
  // The limits `authenticate` found for a key principal, for its `admit` (and the management lane's `accessVersionOf`).
  const keyLimits = new WeakMap<Principal, KeyLimits>();
  // Key principals whose count made by `authenticate` an operation has used; a further operation
  // in the same request (an MCP batch, a GraphQL query) is counted again.
  const doorCountUsed = new WeakSet<Principal>();
  const keyCount = async (ctx: OperationContext, limits: KeyLimits): Promise<KeyLimits> => {
    if (!doorCountUsed.has(ctx.principal)) {
      doorCountUsed.add(ctx.principal);
      return limits;
    }
    return keys.countAgain(ctx.db, ctx.site._id, limits, ctx.request.ip);
  };
  const oauthLimits = new WeakMap<Principal, number>();
  const lastPurge = new Map<string, number>();

  // Contract 4.3: when the API is not public, every endpoint answers 404.
  const assertPublicOpen = async (scope: SiteScope) => {
    const state = await readState(services.workspaceDb(scope.workspace), scope.site._id);
    if (!state.publicEnabled) throw new NotFoundError();
    return state;
  };

  return {
    async assertPublicOpen(scope) {
      await assertPublicOpen(scope);
    },

    async authenticate(surface, credentials, scope) {
      if (surface === 'manage' && oauth.isToken(credentials.authorization)) {
        const state = await readState(services.workspaceDb(scope.workspace), scope.site._id);
        // The switch governs every way into the Management API, OAuth grants included.
        if (!state.keys.enabled) throw new ForbiddenError();
        const principal = await oauth.authenticate(services, scope, credentials.authorization, credentials.resources ?? []);
        if (!principal) throw new UnauthorizedError();
        oauthLimits.set(principal, state.keys.defaultRateLimitPerMin);
        return principal;
      }
      if (surface === 'manage') {
        const { principal, limits } = await keys.authenticate(credentials, scope);
        keyLimits.set(principal, limits);
        return principal;
      }
      if (surface === 'public') {
        await assertPublicOpen(scope);
        return authenticateSession(credentials.cookies, scope);
      }
      if (surface === 'comments') {
        // Its own switch: a site can keep its content public and close comment submission. With
        // the Public API off no entry is public, so there is nothing to comment on either.
        const state = await assertPublicOpen(scope);
        if (!state.commentsEnabled) throw new NotFoundError();
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
      const limits = keyLimits.get(ctx.principal);
      if (limits) results.push(...keyWindows(await keyCount(ctx, limits)));
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
        Promise.all([purgeOldWindows(ctx.db, now), dropCounterWindowsBefore(ctx.db, siteId, now.getTime() - 2 * 60_000)]).catch((error) =>
          services.log.warn({ err: error }, 'rate counter purge failed'),
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

    lanes: createLaneAdmission({ readState, keys, keyLimits }),
  };
}

function callerBucket(ctx: OperationContext): string {
  const { principal } = ctx;
  if (principal.kind === 'key') return `key:${principal.keyId}`;
  if (principal.kind === 'user') return `user:${principal.userId}`;
  return `ip:${ctx.request.ip}`;
}
