import { createHash, timingSafeEqual } from 'node:crypto';
import type { Db } from 'mongodb';
import { newId, randomToken } from '../core/ids.ts';
import { secretDigest } from '../core/text.ts';
import { markClientGranted } from './clients.ts';
import type { Capability } from '../core/capabilities.ts';
import { ACCESS_TOKEN_PREFIX, ACCESS_TTL_MS, CODE_TTL_MS, REFRESH_TOKEN_PREFIX, REFRESH_TTL_MS, oauthCollections, type OAuthGrantDoc } from './model.ts';

/** Token endpoint failures carry the RFC 6749 error code. */
export class OAuthError extends Error {
  constructor(
    readonly code: 'invalid_request' | 'invalid_grant' | 'invalid_client' | 'unsupported_grant_type' | 'invalid_scope' | 'invalid_target',
    message: string,
  ) {
    super(message);
  }
}

export interface TokenPair {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** RFC 7636 S256: BASE64URL(SHA256(verifier)) must equal the challenge; compared in constant time. */
export function pkceMatches(verifier: string, challenge: string): boolean {
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) return false;
  const computed = Buffer.from(createHash('sha256').update(verifier).digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

export async function createGrantWithCode(
  db: Db,
  siteId: string,
  input: { clientId: string; userId: string; scope: Capability[]; resource: string; redirectUri: string; codeChallenge: string },
  now: Date,
): Promise<string> {
  const { grants, secrets } = oauthCollections(db);
  const grant: OAuthGrantDoc = {
    _id: newId(),
    siteId,
    clientId: input.clientId,
    userId: input.userId,
    scope: input.scope,
    resource: input.resource,
    createdAt: now,
    revokedAt: null,
  };
  await grants.insertOne(grant);
  await markClientGranted(db, siteId, input.clientId, now);
  const code = randomToken(32);
  await secrets.insertOne({
    _id: secretDigest(code),
    siteId,
    kind: 'code',
    grantId: grant._id,
    expiresAt: new Date(now.getTime() + CODE_TTL_MS),
    usedAt: null,
    redirectUri: input.redirectUri,
    codeChallenge: input.codeChallenge,
  });
  return code;
}

async function issueTokens(db: Db, grant: OAuthGrantDoc, now: Date): Promise<TokenPair> {
  const access = `${ACCESS_TOKEN_PREFIX}${randomToken(32)}`;
  const refresh = `${REFRESH_TOKEN_PREFIX}${randomToken(32)}`;
  const base = { siteId: grant.siteId, grantId: grant._id, usedAt: null };
  await oauthCollections(db).secrets.insertMany([
    { ...base, _id: secretDigest(access), kind: 'access', expiresAt: new Date(now.getTime() + ACCESS_TTL_MS) },
    { ...base, _id: secretDigest(refresh), kind: 'refresh', expiresAt: new Date(now.getTime() + REFRESH_TTL_MS) },
  ]);
  return { access_token: access, token_type: 'Bearer', expires_in: ACCESS_TTL_MS / 1000, refresh_token: refresh, scope: grant.scope.join(' ') };
}

/**
 * Redeems a single-use secret atomically (first caller wins). A second redemption of a code or a
 * refresh token is treated as theft (RFC 6819 / OAuth 2.1 §4.3.1): the whole grant is revoked.
 */
async function redeem(db: Db, siteId: string, kind: 'code' | 'refresh', secret: string, now: Date) {
  const { secrets, grants } = oauthCollections(db);
  const id = secretDigest(secret);
  const row = await secrets.findOneAndUpdate(
    { _id: id, siteId, kind, usedAt: null, expiresAt: { $gt: now } },
    { $set: { usedAt: now } },
    { returnDocument: 'before' },
  );
  if (!row) {
    const replayed = await secrets.findOne({ _id: id, siteId, kind });
    if (replayed?.usedAt) await revokeGrant(db, siteId, replayed.grantId, now);
    throw new OAuthError('invalid_grant', 'Invalid or expired grant');
  }
  const grant = await grants.findOne({ _id: row.grantId, siteId, revokedAt: null });
  if (!grant) throw new OAuthError('invalid_grant', 'Invalid or expired grant');
  return { row, grant };
}

export async function exchangeCode(
  db: Db,
  siteId: string,
  input: { code: string; clientId: string; redirectUri: string; codeVerifier: string; resource?: string },
  now: Date,
): Promise<TokenPair> {
  const { row, grant } = await redeem(db, siteId, 'code', input.code, now);
  const mismatch =
    grant.clientId !== input.clientId ||
    row.redirectUri !== input.redirectUri ||
    !pkceMatches(input.codeVerifier, row.codeChallenge ?? '') ||
    (input.resource !== undefined && input.resource !== grant.resource);
  if (mismatch) {
    await revokeGrant(db, siteId, grant._id, now);
    throw new OAuthError('invalid_grant', 'Invalid or expired grant');
  }
  return issueTokens(db, grant, now);
}

export async function refreshTokens(db: Db, siteId: string, input: { refreshToken: string; clientId: string }, now: Date) {
  const { grant } = await redeem(db, siteId, 'refresh', input.refreshToken, now);
  if (grant.clientId !== input.clientId) throw new OAuthError('invalid_grant', 'Invalid or expired grant');
  return issueTokens(db, grant, now);
}

export async function revokeGrant(db: Db, siteId: string, grantId: string, now: Date): Promise<void> {
  await oauthCollections(db).grants.updateOne({ _id: grantId, siteId, revokedAt: null }, { $set: { revokedAt: now } });
}

/** The grant behind a live access (or, for revocation, refresh) token, or null (unknown, expired, revoked). */
export async function grantOfToken(db: Db, siteId: string, token: string, now: Date, kinds: Array<'access' | 'refresh'> = ['access']) {
  const kind = token.startsWith(ACCESS_TOKEN_PREFIX) ? 'access' : token.startsWith(REFRESH_TOKEN_PREFIX) ? 'refresh' : null;
  if (!kind || !kinds.includes(kind)) return null;
  const { secrets, grants } = oauthCollections(db);
  const row = await secrets.findOne({ _id: secretDigest(token), siteId, kind, expiresAt: { $gt: now } });
  if (!row) return null;
  return grants.findOne({ _id: row.grantId, siteId, revokedAt: null });
}

/** Every live grant of a user (a password change): its codes, access and refresh tokens stop at once. */
export async function revokeUserGrants(db: Db, siteId: string, userId: string, now: Date): Promise<void> {
  await oauthCollections(db).grants.updateMany({ siteId, userId, revokedAt: null }, { $set: { revokedAt: now } });
}
