import type { Operation } from '../core/operation.ts';
import type { Principal } from '../core/principal.ts';
import type { SiteScope } from '../tenancy/site-resolver.ts';
import { workspaceLimit } from '../tenancy/quota-model.ts';
import type { Credentials } from './credentials.ts';
import { keyWindows, type KeyAuthenticator, type KeyLimits } from './key-auth.ts';
import type { LiveResult } from './live-state.ts';
import { exceeded, rateLimitHeaders } from './rate-limit.ts';
import { SESSION_COOKIE } from './sessions.ts';
import type { StateReader } from './state-reader.ts';

/**
 * What the lanes in front of Fastify (services/http/public-lane.ts, manage-lane.ts) ask of access
 * instead of the gate's `authenticate` + `admit`: the same answers, from what this gateway holds,
 * with no allocation or lookup beyond the gate's own. Built by the gate over its own key
 * authenticator and access state, so both paths see one cache and one count (the gate's `lanes`).
 */
export interface LaneAdmission {
  /**
   * Synchronous, no database: may this public read be answered from the cache-hit lane, skipping
   * `authenticate` and `admit`? Only when they would let it through with nothing to count: an
   * anonymous caller (no session cookie), an operation without a limit of its own, a workspace
   * without a requests-per-minute quota, and the site's access state held under the change feed
   * with the Public API on. Otherwise false, and the request takes the full path.
   */
  admitsReadyAnswer(scope: SiteScope, operation: Operation, cookies: Record<string, string | undefined>): boolean;
  /** Synchronous, no database: the id of the valid key a bearer names, when this gateway holds that key. */
  peekKeyId(scope: SiteScope, authorization: string | undefined): string | undefined;
  /**
   * The management lane's `authenticate` + `admit` for a held read (services/http/manage-lane.ts):
   * the request is counted and the site's access state read in one round trip, every key check
   * runs, and `headers` (the rate-limit headers) come back only when the full path would let it
   * through with the key as held at `accessVersion` and nothing else to count. Otherwise the
   * request goes the full path, which reuses `counted` instead of counting it again.
   */
  admitHeldRead(scope: SiteScope, credentials: Credentials, keyId: string, operation: Operation, accessVersion: number): Promise<HeldReadAdmission>;
  /**
   * The same without a round trip (the access state the feed holds, a position from the counter
   * blocks this gateway leased); `undefined` when something is not held and `admitHeldRead` must run.
   */
  admitHeldReadNow(scope: SiteScope, credentials: Credentials, keyId: string, operation: Operation, accessVersion: number): HeldReadAdmission | undefined;
  /** The site's `accessVersion` a key principal was authenticated under (what a held answer is tagged with). */
  accessVersionOf(principal: Principal): number | undefined;
}

/** `headers` when the held answer may go out; else the full path runs, reusing `counted` when there is one. */
export interface HeldReadAdmission {
  counted?: LiveResult;
  headers?: Record<string, string>;
}

/** What the gate shares with its lanes: its access state, its key authenticator, the limits `authenticate` found per key principal. */
export interface LaneAdmissionParts {
  readState: StateReader;
  keys: KeyAuthenticator;
  keyLimits: Pick<WeakMap<Principal, KeyLimits>, 'get'>;
}

/** Nothing held, nothing admitted: every request takes the full path (the deny-all gate's lanes). */
export const noLaneAdmission: LaneAdmission = {
  admitsReadyAnswer: () => false,
  peekKeyId: () => undefined,
  admitHeldRead: async () => ({}),
  admitHeldReadNow: () => ({}),
  accessVersionOf: () => undefined,
};

export function createLaneAdmission({ readState, keys, keyLimits }: LaneAdmissionParts): LaneAdmission {
  return {
    admitsReadyAnswer(scope, operation, cookies) {
      if (operation.surface !== 'public' || operation.rateLimit || operation.heavy || cookies[SESSION_COOKIE]) return false;
      if (workspaceLimit(scope.workspace.quotas, 'requestsPerMinute') !== null) return false;
      // Through a database outage too: a public answer held from before it is served (docs/production.md).
      return readState.peekThroughOutage(scope.workspace.dbName, scope.site._id)?.publicEnabled === true;
    },

    peekKeyId(scope, authorization) {
      return keys.peekKeyId(scope.site._id, authorization);
    },

    async admitHeldRead(scope, credentials, keyId, operation, accessVersion) {
      if (!heldReadAllowed(scope, operation)) return {};
      return heldAdmission(await keys.countHeldRead(credentials, scope, keyId), accessVersion);
    },

    admitHeldReadNow(scope, credentials, keyId, operation, accessVersion) {
      if (!heldReadAllowed(scope, operation)) return {};
      const held = keys.heldReadNow(credentials, scope, keyId);
      return held && heldAdmission(held, accessVersion);
    },

    accessVersionOf(principal) {
      return keyLimits.get(principal)?.state.version;
    },
  };
}

/** What `admit` would count besides the key's own windows sends a held read the full path. */
const heldReadAllowed = (scope: SiteScope, operation: Operation) =>
  !operation.rateLimit && !operation.heavy && workspaceLimit(scope.workspace.quotas, 'requestsPerMinute') === null;

/** Over a limit, or the key's access moved since the answer was held: the full path answers, from the same count. */
function heldAdmission({ counted, limits }: { counted?: LiveResult; limits?: KeyLimits }, accessVersion: number): HeldReadAdmission {
  if (!limits || limits.state.version !== accessVersion) return { counted };
  const results = keyWindows(limits);
  if (results.some(exceeded)) return { counted };
  return { counted, headers: rateLimitHeaders(results) };
}
