import type { Db } from 'mongodb';
import type { Services } from '../core/context.ts';
import type { SiteScope } from '../platform/tenancy.ts';
import type { AccessState } from './site-settings-store.ts';
import type { Capability } from '../core/capabilities.ts';
import type { Credentials } from './credentials.ts';
import type { Principal } from '../core/principal.ts';
import { accessCollections, type ApiKeyDoc } from './model.ts';
import { parseSecret, secretMatches } from './key-secrets.ts';
import { compileIpRules } from './ip-rules.ts';
import { loadUserAccess } from './user-access.ts';
import { refuse, type FailureReason } from './auth-failure.ts';
import { TooManyRequestsError } from '../core/errors.ts';
import { createLiveState, ipField, keyField, type LiveResult } from './live-state.ts';

interface CachedKey {
  version: number;
  key: ApiKeyDoc | null;
  owner: { capabilities: Set<Capability>; platformOperator: boolean } | null;
  /** Live re-check: the key's capabilities that its owner holds at this version. */
  effective: ReadonlySet<Capability>;
  ipAllowed: ((ip: string) => boolean) | null;
}

/** What `admit` needs to answer the per-key and per-IP limits of an authenticated request. */
export interface KeyLimits {
  state: AccessState;
  key: ApiKeyDoc;
  keyCount: number;
  ipCount: number;
  resetSeconds: number;
}

/**
 * Bearer authentication for the Management API, re-checked on every request. The site's access
 * state (switches + `accessVersion`) is read per request; the key row and its owner's current
 * capabilities are cached per gateway and used only while that version is unchanged, so a
 * revocation, rotation, role change or switch reaches every gateway on the next request. Expiry is
 * compared with the clock each time. For a key this gateway already knows, the state read and the
 * per-key and per-IP counters are one batched round trip (`live-state.ts`).
 */
export function createKeyAuthenticator(services: Services, readState: (db: Db, siteId: string) => Promise<AccessState>) {
  const cache = new Map<string, CachedKey>();
  const live = createLiveState();

  async function load(db: Db, siteId: string, lookup: string, version: number): Promise<CachedKey> {
    const key = await accessCollections(db).apiKeys.findOne({ siteId, lookup });
    const ownerAccess = key ? await loadUserAccess(db, siteId, key.ownerId) : null;
    const entry: CachedKey = {
      version,
      key,
      owner: ownerAccess ? { capabilities: ownerAccess.capabilities, platformOperator: ownerAccess.user.platformOperator } : null,
      effective: new Set(key && ownerAccess ? key.capabilities.filter((capability) => ownerAccess.capabilities.has(capability)) : []),
      ipAllowed: key ? compileIpRules(key.allowedIps) : null,
    };
    if (cache.size > 10_000) cache.clear();
    cache.set(`${siteId}:${lookup}`, entry);
    return entry;
  }

  return async function authenticateKey(credentials: Credentials, scope: SiteScope): Promise<{ principal: Principal; limits: KeyLimits }> {
    const db = services.workspaceDb(scope.workspace);
    const siteId = scope.site._id;
    const now = services.clock.now();
    const { ip } = credentials;

    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(credentials.authorization ?? '')?.[1];
    const lookup = bearer ? parseSecret(bearer) : null;
    const cached = lookup ? cache.get(`${siteId}:${lookup}`) : undefined;
    const known = cached?.key && cached.owner && cached.key.status === 'active' ? cached.key : null;

    // A key this gateway has seen valid: count and read the state together. Anything else reads
    // the state only; counter fields are added for validated keys alone, so guessing with junk
    // secrets cannot grow the site's document.
    let counted: LiveResult | null = null;
    let state: AccessState;
    if (known) {
      counted = await live(db, siteId, now, [ipField(ip), keyField(known._id)]);
      state = counted.state;
    } else {
      state = await readState(db, siteId);
    }

    const fail = async (reason: FailureReason, keyId?: string): Promise<never> => {
      // Guessing from one address runs into that address's budget: 429 instead of yet another 401.
      const failures = await services.rateCounters.hit(db, siteId, 'authfail', `authfail:${ip}`, state.keys.defaultRateLimitPerMin, now);
      if (failures.count > state.keys.defaultRateLimitPerMin) {
        await refuse(db, siteId, now, { ip, reason, keyId }).catch(() => undefined);
        throw new TooManyRequestsError(failures.resetSeconds);
      }
      return refuse(db, siteId, now, { ip, reason, keyId });
    };

    if (!state.keys.enabled) return fail('management-api-disabled');
    if (!bearer) return fail('missing');
    if (!lookup) return fail('malformed');
    const entry = cached && cached.version === state.version ? cached : await load(db, siteId, lookup, state.version);
    const { key, owner } = entry;
    if (!key) return fail('unknown');
    if (!secretMatches(bearer, key.secretHash)) return fail('secret-mismatch');
    if (key.status !== 'active') return fail('revoked', key._id);
    if (key.expiresAt && key.expiresAt.getTime() <= now.getTime()) return fail('expired', key._id);
    if (!owner) return fail('owner-missing', key._id);
    if (entry.ipAllowed && !entry.ipAllowed(ip)) return fail('ip-not-allowed', key._id);
    if (!originAllowed(key, state, credentials.origin)) return fail('origin-not-allowed', key._id);

    if (!counted || known?._id !== key._id) counted = await live(db, siteId, now, [ipField(ip), keyField(key._id)]);
    const principal: Principal = {
      kind: 'key',
      keyId: key._id,
      userId: key.ownerId,
      // Live re-check: never more than the owner holds right now (the entry is as new as the version).
      capabilities: entry.effective,
      scope: key.scope,
      isPlatformOperator: owner.platformOperator,
    };
    return {
      principal,
      limits: {
        state,
        key,
        keyCount: counted.counts[keyField(key._id)] ?? 1,
        ipCount: counted.counts[ipField(ip)] ?? 1,
        resetSeconds: counted.resetSeconds,
      },
    };
  };
}

/**
 * A key's own allowed origins, when set, require a matching `Origin` (a call without one is
 * refused). The global list only constrains calls that carry an `Origin` (browsers).
 */
function originAllowed(key: ApiKeyDoc, state: AccessState, origin: string | undefined): boolean {
  if (key.allowedOrigins.length > 0) return origin !== undefined && key.allowedOrigins.includes(origin);
  if (state.keys.allowedOrigins.length > 0 && origin !== undefined) return state.keys.allowedOrigins.includes(origin);
  return true;
}
