import type { Db } from 'mongodb';
import type { Services } from '../core/context.ts';
import type { SiteScope } from '../tenancy/site-resolver.ts';
import type { AccessState } from './site-settings-store.ts';
import type { Capability } from '../core/capabilities.ts';
import type { Credentials } from './credentials.ts';
import type { Principal } from '../core/principal.ts';
import { accessCollections, type ApiKeyDoc } from './model.ts';
import { parseSecret, secretMatchesDigest, storedDigest } from './key-secrets.ts';
import { compileIpRules } from './ip-rules.ts';
import { loadUserAccess } from './user-access.ts';
import { refuse, type FailureReason } from './auth-failure.ts';
import { ForbiddenError, TooManyRequestsError } from '../core/errors.ts';
import { createLiveState, ipField, keyField, raiseCounterFields, RATE_WINDOW_MS, type LiveResult } from './live-state.ts';
import { createCountLeases } from './count-leases.ts';
import type { StateReader } from './state-reader.ts';
import type { WindowResult } from './rate-limit.ts';

interface CachedKey {
  version: number;
  key: ApiKeyDoc | null;
  owner: { capabilities: Set<Capability>; platformOperator: boolean } | null;
  /** Live re-check: the key's capabilities that its owner holds at this version. */
  effective: ReadonlySet<Capability>;
  ipAllowed: ((ip: string) => boolean) | null;
  /** The key's stored hash as bytes (the lane checks the secret on every request). */
  digest: Buffer | null;
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
 * state (switches + `accessVersion`) is held exactly by the change feed or read per request; the
 * key row and its owner's current capabilities are cached per gateway and used only while that
 * version is unchanged, so a revocation, rotation, role change or switch reaches every gateway on
 * the next request. Expiry is compared with the clock each time. For a key this gateway already
 * knows, the per-key and per-IP counts come from blocks this gateway leased (`countKnown`),
 * else the state read and the counters are one batched round trip (`live-state.ts`).
 */
export function createKeyAuthenticator(services: Services, readState: StateReader) {
  const cache = new Map<string, CachedKey>();
  const live = createLiveState();
  const leases = createCountLeases(raiseCounterFields, services.log);

  async function load(db: Db, siteId: string, lookup: string, version: number): Promise<CachedKey> {
    const key = await accessCollections(db).apiKeys.findOne({ siteId, lookup });
    const ownerAccess = key ? await loadUserAccess(db, siteId, key.ownerId) : null;
    const entry: CachedKey = {
      version,
      key,
      owner: ownerAccess ? { capabilities: ownerAccess.capabilities, platformOperator: ownerAccess.user.platformOperator } : null,
      effective: new Set(key && ownerAccess ? key.capabilities.filter((capability) => ownerAccess.capabilities.has(capability)) : []),
      ipAllowed: key ? compileIpRules(key.allowedIps) : null,
      digest: key ? storedDigest(key.secretHash) : null,
    };
    if (cache.size > 10_000) cache.clear();
    cache.set(`${siteId}:${lookup}`, entry);
    return entry;
  }

  // The rate counters' field names, built once per key and per client address (the management
  // lane needs both on every held read) and bounded like the key cache.
  const counterFields = { key: boundedMemo(keyField), ip: boundedMemo(ipField) };
  const bearerOf = (authorization: string | undefined) => /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];

  /** An entry of a key this gateway has seen valid (active, with an owner). */
  const usable = (cached: CachedKey | undefined) => (cached?.key && cached.owner && cached.key.status === 'active' ? cached : undefined);
  /** The entry when the bearer is its key's secret: nothing is counted against a key before this holds. */
  const secretMatches = (entry: CachedKey | undefined, bearer: string | undefined) =>
    entry && bearer && secretMatchesDigest(bearer, entry.digest!) ? entry : undefined;
  /** The usable cached entry of the key a bearer names. */
  const knownEntry = (siteId: string, bearer: string | undefined) => {
    const lookup = bearer ? parseSecret(bearer) : null;
    return usable(lookup ? cache.get(`${siteId}:${lookup}`) : undefined);
  };

  /** Why this key, as held in `entry`, may not authenticate this request now (null: it may). One list for both paths. */
  const keyFailure = (entry: CachedKey, state: AccessState, bearer: string, credentials: Credentials, now: Date): FailureReason | null => {
    const { key } = entry;
    if (!key) return 'unknown';
    if (!secretMatchesDigest(bearer, entry.digest!)) return 'secret-mismatch';
    if (key.status !== 'active') return 'revoked';
    if (key.expiresAt && key.expiresAt.getTime() <= now.getTime()) return 'expired';
    if (!entry.owner) return 'owner-missing';
    if (entry.ipAllowed && !entry.ipAllowed(credentials.ip)) return 'ip-not-allowed';
    if (!originAllowed(key, state, credentials.origin)) return 'origin-not-allowed';
    return null;
  };

  const limitsOf = (state: AccessState, key: ApiKeyDoc, counted: LiveResult, ip: string): KeyLimits => ({
    state,
    key,
    keyCount: counted.counts[counterFields.key(key._id)] ?? 1,
    ipCount: counted.counts[counterFields.ip(ip)] ?? 1,
    resetSeconds: counted.resetSeconds,
  });

  async function authenticateKey(credentials: Credentials, scope: SiteScope): Promise<{ principal: Principal; limits: KeyLimits }> {
    const db = services.workspaceDb(scope.workspace);
    const siteId = scope.site._id;
    const now = services.clock.now();
    const { ip } = credentials;

    const bearer = bearerOf(credentials.authorization);
    const lookup = bearer ? parseSecret(bearer) : null;
    const cached = lookup ? cache.get(`${siteId}:${lookup}`) : undefined;
    const known = secretMatches(usable(cached), bearer)?.key ?? null;

    // A key this gateway has seen valid, presented with its secret: count and read the state
    // together. Anything else reads the state only: a key's budget is spent only once its secret
    // matched (a lookup part alone spends nothing but the address's failed-auth budget), and
    // counter fields are added for validated keys alone, so guessing cannot grow the site's
    // document. A request the management lane already counted (and then handed over) is not
    // counted again.
    let counted: LiveResult | null = credentials.counted ?? null;
    let state: AccessState;
    if (counted) {
      state = counted.state;
    } else if (known) {
      counted = await countKnown(db, siteId, known, ip, now);
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

    // Switched off, nobody gets in whatever they send: no credential was tried, so nothing is
    // audited or counted (a flood against a closed API writes nothing; docs/access.md).
    if (!state.keys.enabled) throw new ForbiddenError();
    if (!bearer) return fail('missing');
    if (!lookup) return fail('malformed');
    const entry = cached && cached.version === state.version ? cached : await load(db, siteId, lookup, state.version);
    const failure = keyFailure(entry, state, bearer, credentials, now);
    // A key is named in the log only once its secret matched.
    if (failure) return fail(failure, failure === 'unknown' || failure === 'secret-mismatch' ? undefined : entry.key?._id);
    const key = entry.key!;
    const owner = entry.owner!;

    if (!counted || !(counterFields.key(key._id) in counted.counts)) counted = await live(db, siteId, now, [counterFields.ip(ip), counterFields.key(key._id)]);
    const principal: Principal = {
      kind: 'key',
      keyId: key._id,
      userId: key.ownerId,
      // Live re-check: never more than the owner holds right now (the entry is as new as the version).
      capabilities: entry.effective,
      scope: key.scope,
      isPlatformOperator: owner.platformOperator,
    };
    return { principal, limits: limitsOf(state, key, counted, ip) };
  }

  /** Every check of `authenticateKey` against the key as this gateway holds it, under `state`. */
  function heldKeyPasses(
    entry: CachedKey | undefined,
    state: AccessState,
    bearer: string | undefined,
    keyId: string,
    credentials: Credentials,
    now: Date,
  ): entry is CachedKey & { key: ApiKeyDoc } {
    return (
      !!entry?.key &&
      !!bearer &&
      entry.version === state.version &&
      entry.key._id === keyId &&
      state.keys.enabled &&
      keyFailure(entry, state, bearer, credentials, now) === null
    );
  }

  /**
   * The management lane's check without a round trip: the site's access state as the change feed
   * holds it (exact by its lease, docs/access.md), the key as this gateway holds it, and one
   * position of the key's and the IP's counters from blocks this gateway leased (count-leases.ts).
   * `undefined` when any of them is not held: the lane then counts in the database (`countHeldRead`).
   */
  function heldReadNow(credentials: Credentials, scope: SiteScope, keyId: string): { counted: LiveResult; limits: KeyLimits } | undefined {
    const siteId = scope.site._id;
    const state = readState.peek(scope.workspace.dbName, siteId);
    if (!state) return undefined;
    const now = services.clock.now();
    const bearer = bearerOf(credentials.authorization);
    const entry = knownEntry(siteId, bearer);
    if (!heldKeyPasses(entry, state, bearer, keyId, credentials, now)) return undefined;
    const window = windowOf(now);
    const positions = leases.take(services.workspaceDb(scope.workspace), siteId, window, leaseFields(state, entry.key, credentials.ip));
    if (!positions) return undefined;
    const counted = leasedCount(state, entry.key, credentials.ip, window, now, positions);
    return { counted, limits: limitsOf(state, entry.key, counted, credentials.ip) };
  }

  const windowOf = (now: Date) => Math.floor(now.getTime() / RATE_WINDOW_MS) * RATE_WINDOW_MS;
  /** The key's and the address's counter fields with their limits, in the order `leasedCount` reads the positions. */
  const leaseFields = (state: AccessState, key: ApiKeyDoc, ip: string): [string, number][] => {
    const keyLimit = key.rateLimitPerMin ?? state.keys.defaultRateLimitPerMin;
    return [
      [counterFields.key(key._id), keyLimit],
      [counterFields.ip(ip), Math.max(keyLimit, state.keys.defaultRateLimitPerMin)],
    ];
  };
  const leasedCount = (state: AccessState, key: ApiKeyDoc, ip: string, window: number, now: Date, [keyCount, ipCount]: number[]): LiveResult => ({
    state,
    counts: { [counterFields.key(key._id)]: keyCount, [counterFields.ip(ip)]: ipCount },
    resetSeconds: Math.max(1, Math.ceil((window + RATE_WINDOW_MS - now.getTime()) / 1000)),
  });

  /**
   * The full path's count for a key this gateway knows whose secret matched: positions from this
   * gateway's leased blocks, under `state` (by default the access state as the feed holds it, read
   * when it is not held), waiting for a claim rather than counting apart (docs/access.md,
   * "Counting without a round trip"); when no block can be had, the count and the state's read in
   * one statement. The caller then runs every check against the state it answers, as after a
   * count in the database.
   */
  async function countKnown(db: Db, siteId: string, key: ApiKeyDoc, ip: string, now: Date, held?: AccessState): Promise<LiveResult> {
    const state = held ?? readState.peek(db.databaseName, siteId) ?? (await readState(db, siteId));
    const window = windowOf(now);
    const positions = await leases.takeOrClaim(db, siteId, window, leaseFields(state, key, ip));
    if (positions) return leasedCount(state, key, ip, window, now, positions);
    return live(db, siteId, now, [counterFields.ip(ip), counterFields.key(key._id)]);
  }

  /**
   * The management lane's check with a round trip: counts the request as the full path would and
   * reads the site's access state in the same statement, then runs every check of
   * `authenticateKey`. `limits` only when all pass; the count stands either way (the full path
   * reuses it).
   */
  async function countHeldRead(credentials: Credentials, scope: SiteScope, keyId: string): Promise<{ counted?: LiveResult; limits?: KeyLimits }> {
    const siteId = scope.site._id;
    const now = services.clock.now();
    const bearer = bearerOf(credentials.authorization);
    const entry = knownEntry(siteId, bearer);
    // A wrong secret is not counted here: the full path refuses it on the address's failed-auth budget.
    if (!secretMatches(entry, bearer)) return {};
    const counted = await live(services.workspaceDb(scope.workspace), siteId, now, [counterFields.ip(credentials.ip), counterFields.key(keyId)]);
    const { state } = counted;
    if (!heldKeyPasses(entry, state, bearer, keyId, credentials, now)) return { counted };
    return { counted, limits: limitsOf(state, entry.key, counted, credentials.ip) };
  }

  /**
   * One more operation in a request already authenticated with this key (MCP and GraphQL run
   * several per request): counted against the key's and the IP's windows exactly as a request is.
   */
  async function countAgain(db: Db, siteId: string, limits: KeyLimits, ip: string): Promise<KeyLimits> {
    const counted = await countKnown(db, siteId, limits.key, ip, services.clock.now(), limits.state);
    return limitsOf(limits.state, limits.key, counted, ip);
  }

  return {
    authenticate: authenticateKey,
    countAgain,
    heldReadNow,
    countHeldRead,
    /** Synchronous, no database: the id of the valid key this bearer names, as this gateway last saw it. */
    peekKeyId: (siteId: string, authorization: string | undefined) => knownEntry(siteId, bearerOf(authorization))?.key?._id,
  };
}

export type KeyAuthenticator = ReturnType<typeof createKeyAuthenticator>;

/** A key's own window and the per-IP ceiling beside it (what `admit` and the management lane check). */
export function keyWindows(limits: KeyLimits): WindowResult[] {
  const keyLimit = limits.key.rateLimitPerMin ?? limits.state.keys.defaultRateLimitPerMin;
  const { resetSeconds } = limits;
  return [
    { name: 'key', limit: keyLimit, count: limits.keyCount, resetSeconds },
    // The per-IP ceiling never undercuts a key's own, higher limit.
    { name: 'ip', limit: Math.max(keyLimit, limits.state.keys.defaultRateLimitPerMin), count: limits.ipCount, resetSeconds },
  ];
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

/** `compute` remembered per argument, for at most `max` arguments (then forgotten all at once). */
function boundedMemo(compute: (argument: string) => string, max = 10_000): (argument: string) => string {
  const known = new Map<string, string>();
  return (argument) => {
    let value = known.get(argument);
    if (value === undefined) {
      if (known.size >= max) known.clear();
      known.set(argument, (value = compute(argument)));
    }
    return value;
  };
}
