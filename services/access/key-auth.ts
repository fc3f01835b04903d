import type { Db } from 'mongodb';
import type { Services } from '../core/context.ts';
import type { SiteScope } from '../platform/tenancy.ts';
import type { AccessState } from '../site/settings-store.ts';
import type { Capability } from './capabilities.ts';
import type { Credentials } from './gate.ts';
import type { Principal } from './principal.ts';
import { accessCollections, type ApiKeyDoc } from './model.ts';
import { parseSecret, secretMatches } from './key-secrets.ts';
import { compileIpRules } from './ip-rules.ts';
import { loadUserAccess } from './user-access.ts';
import { refuse, type FailureReason } from './auth-failure.ts';
import { TooManyRequestsError } from '../core/errors.ts';
import { hitWindow, type WindowResult } from './rate-limit.ts';

interface CachedKey {
  version: number;
  key: ApiKeyDoc | null;
  owner: { capabilities: Set<Capability>; platformOperator: boolean } | null;
  ipAllowed: ((ip: string) => boolean) | null;
}

/** Counters started while the key is being checked, finished by `admit`. */
export interface PendingLimits {
  state: AccessState;
  key: ApiKeyDoc;
  ip: Promise<WindowResult>;
  perKey: Promise<WindowResult>;
}

/**
 * Bearer authentication for the Management API, re-checked on every request. One small document
 * (the site's access state: switches + `accessVersion`) is read per request; the key row and its
 * owner's current capabilities are cached per gateway and used only while that version is
 * unchanged, so a revocation, rotation, role change or switch reaches every gateway on the next
 * request. Expiry is compared with the clock each time. The per-IP and per-key counters are
 * started in parallel with that read, so a request costs one round trip of latency when cached.
 */
export function createKeyAuthenticator(services: Services, readState: (db: Db, siteId: string) => Promise<AccessState>) {
  const cache = new Map<string, CachedKey>();

  async function load(scope: SiteScope, lookup: string, version: number, db: Db): Promise<CachedKey> {
    const key = await accessCollections(db).apiKeys.findOne({ siteId: scope.site._id, lookup });
    const ownerAccess = key ? await loadUserAccess(db, scope.site._id, key.ownerId) : null;
    const entry: CachedKey = {
      version,
      key,
      owner: ownerAccess ? { capabilities: ownerAccess.capabilities, platformOperator: ownerAccess.user.platformOperator } : null,
      ipAllowed: key ? compileIpRules(key.allowedIps) : null,
    };
    if (cache.size > 10_000) cache.clear();
    cache.set(`${scope.site._id}:${lookup}`, entry);
    return entry;
  }

  return async function authenticateKey(credentials: Credentials, scope: SiteScope): Promise<{ principal: Principal; pending: PendingLimits }> {
    const db = services.workspaceDb(scope.workspace);
    const siteId = scope.site._id;
    const now = services.clock.now();
    const { ip } = credentials;

    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(credentials.authorization ?? '')?.[1];
    const lookup = bearer ? parseSecret(bearer) : null;
    const cached = lookup ? cache.get(`${siteId}:${lookup}`) : undefined;

    // Started before we know the key is good: the IP budget also caps guessing.
    const ipHit = hitWindow(db, siteId, 'ip', `ip:${ip}`, Number.MAX_SAFE_INTEGER, now);
    ipHit.catch(() => undefined);
    const earlyKeyHit = cached?.key ? hitWindow(db, siteId, 'key', `key:${cached.key._id}`, Number.MAX_SAFE_INTEGER, now) : undefined;
    earlyKeyHit?.catch(() => undefined);
    const state = await readState(db, siteId);
    const fail = async (reason: FailureReason, keyId?: string): Promise<never> => {
      // Guessing from one address runs into that address's budget: 429 instead of yet another 401.
      const perIp = await ipHit.catch(() => null);
      if (perIp && perIp.count > state.keys.defaultRateLimitPerMin) {
        await refuse(db, siteId, now, { ip, reason, keyId }).catch(() => undefined);
        throw new TooManyRequestsError(perIp.resetSeconds);
      }
      return refuse(db, siteId, now, { ip, reason, keyId });
    };

    if (!state.keys.enabled) return fail('management-api-disabled');
    if (!bearer) return fail('missing');
    if (!lookup) return fail('malformed');
    const entry = cached && cached.version === state.version ? cached : await load(scope, lookup, state.version, db);
    const { key, owner } = entry;
    if (!key) return fail('unknown');
    if (!secretMatches(bearer, key.secretHash)) return fail('secret-mismatch');
    if (key.status !== 'active') return fail('revoked', key._id);
    if (key.expiresAt && key.expiresAt.getTime() <= now.getTime()) return fail('expired', key._id);
    if (!owner) return fail('owner-missing', key._id);
    if (entry.ipAllowed && !entry.ipAllowed(ip)) return fail('ip-not-allowed', key._id);
    if (!originAllowed(key, state, credentials.origin)) return fail('origin-not-allowed', key._id);

    const capabilities = new Set(key.capabilities.filter((capability) => owner.capabilities.has(capability)));
    const principal: Principal = {
      kind: 'key',
      keyId: key._id,
      userId: key.ownerId,
      capabilities,
      scope: key.scope,
      isPlatformOperator: owner.platformOperator,
    };
    const perKey =
      earlyKeyHit && cached?.key?._id === key._id
        ? earlyKeyHit
        : hitWindow(db, siteId, 'key', `key:${key._id}`, Number.MAX_SAFE_INTEGER, now);
    perKey.catch(() => undefined);
    return { principal, pending: { state, key, ip: ipHit, perKey } };
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
