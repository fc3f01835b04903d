import type { Db } from 'mongodb';
import type { Capability } from '../core/capabilities.ts';
import type { IndexSpec } from '../tenancy/indexes.ts';

/** A dynamically registered public client (RFC 7591); PKCE is its only proof. */
export interface OAuthClientDoc {
  _id: string;
  siteId: string;
  name: string;
  redirectUris: string[];
  createdAt: Date;
  /**
   * When it first got a grant; null until then (it is removed once unused for a day, clients.ts).
   * Absent on clients stored before this was recorded: the purge looks for their grants.
   */
  grantedAt?: Date | null;
}

/** One user's consent to one client: codes and tokens hang off it, revoking it ends them all. */
export interface OAuthGrantDoc {
  _id: string;
  siteId: string;
  clientId: string;
  userId: string;
  /** Capabilities consented to; checked again against the user's current ones on every request. */
  scope: Capability[];
  /** The resource (RFC 8707) the tokens are bound to: the MCP endpoint or the Management API base. */
  resource: string;
  createdAt: Date;
  revokedAt: Date | null;
}

/** Authorization codes, access and refresh tokens; stored by the sha256 of their secret only. */
export interface OAuthSecretDoc {
  _id: string;
  siteId: string;
  kind: 'code' | 'access' | 'refresh';
  grantId: string;
  expiresAt: Date;
  /** Codes and refresh tokens are single-use: the first redemption sets this atomically. */
  usedAt: Date | null;
  /** Codes only. */
  redirectUri?: string;
  codeChallenge?: string;
}

export const OAUTH_COLLECTIONS = {
  clients: 'oauth_clients',
  grants: 'oauth_grants',
  secrets: 'oauth_secrets',
} as const;

export function oauthCollections(db: Db) {
  return {
    clients: db.collection<OAuthClientDoc>(OAUTH_COLLECTIONS.clients),
    grants: db.collection<OAuthGrantDoc>(OAUTH_COLLECTIONS.grants),
    secrets: db.collection<OAuthSecretDoc>(OAUTH_COLLECTIONS.secrets),
  };
}

export const oauthIndexes: IndexSpec[] = [
  { collection: OAUTH_COLLECTIONS.grants, keys: { siteId: 1, userId: 1, revokedAt: 1 } },
  { collection: OAUTH_COLLECTIONS.secrets, keys: { siteId: 1, grantId: 1 } },
];

/** An OAuth principal's `keyId` (rate limits, audit rows and webhook ownership key on it). */
export const oauthKeyId = (grantId: string) => `oauth:${grantId}`;
/** The grant behind such a `keyId`, or null for an API key's id. */
export const grantIdOfKeyId = (keyId: string) => (keyId.startsWith('oauth:') ? keyId.slice('oauth:'.length) : null);

export const ACCESS_TOKEN_PREFIX = 'svo_';
export const REFRESH_TOKEN_PREFIX = 'svr_';
export const CODE_TTL_MS = 60_000;
export const ACCESS_TTL_MS = 60 * 60_000;
export const REFRESH_TTL_MS = 30 * 24 * 60 * 60_000;
