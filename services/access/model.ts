import type { Db } from 'mongodb';
import type { Capability } from '../core/capabilities.ts';
import type { KeyScope } from '../core/principal.ts';
import type { Policy } from './roles.ts';
import { AUDIT_COLLECTION, type AuditDoc } from '../audit/model.ts';

/** Workspace collections of the access feature. Every document carries `siteId`. */
export const ACCESS_COLLECTIONS = {
  users: 'users',
  roles: 'roles',
  sessions: 'sessions',
  apiKeys: 'api_keys',
  /** The audit trail's collection (services/audit/model.ts): access writes its failure rows there. */
  audit: AUDIT_COLLECTION,
  counters: 'rate_counters',
  invitations: 'invitations',
  passwordResets: 'password_resets',
} as const;

export interface UserDoc {
  _id: string;
  siteId: string;
  email: string;
  name: string;
  role: string;
  policy: Policy;
  platformOperator: boolean;
  passwordHash: string;
  /** A disabled account signs in nowhere: its sessions end, its keys and OAuth grants stop (docs/accounts.md). */
  disabled?: boolean;
  /** Two-factor sign-in (RFC 6238), when enrolled or being enrolled (two-factor.ts). */
  totp?: TotpState;
  createdAt: Date;
  updatedAt: Date;
}

export interface TotpState {
  /** The seed, sealed with SECRET_KEY (`totp-seeds`), bound to the site and user. */
  sealed: string;
  /** Null while the enrolment waits for its first code. */
  confirmedAt: Date | null;
  /** The last step a code was accepted for: a code is never accepted twice. */
  lastStep: number;
  /** sha256 of each unused recovery code. */
  recoveryCodes: string[];
}

export interface RoleDoc {
  _id: string;
  siteId: string;
  name: string;
  description: string;
  capabilities: Capability[];
  createdAt: Date;
  updatedAt: Date;
}

export interface SessionDoc {
  /** sha256 of the cookie token: a leaked sessions collection opens no session. */
  _id: string;
  siteId: string;
  userId: string;
  createdAt: Date;
  expiresAt: Date;
  /** What the sessions list shows: the device (from User-Agent), the address, the last request. */
  userAgent?: string;
  ip?: string;
  lastSeenAt?: Date;
}

/** An invitation by e-mail: the invitee chooses their password through its single-use link. */
export interface InvitationDoc {
  _id: string;
  siteId: string;
  email: string;
  role: string;
  invitedBy: string | null;
  /** sha256 of the link's secret; the secret itself is only in the mail. */
  secretHash: string;
  expiresAt: Date;
  state: 'pending' | 'accepted' | 'revoked';
  /** How many times the mail was sent (resending issues a new link). */
  sent: number;
  userId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A password reset link: single use, expiring. */
export interface PasswordResetDoc {
  _id: string;
  siteId: string;
  userId: string;
  secretHash: string;
  expiresAt: Date;
  usedAt: Date | null;
  createdAt: Date;
}

export interface ApiKeyDoc {
  _id: string;
  siteId: string;
  name: string;
  /** Public part of the secret, used to find the row; the rest is only stored hashed. */
  lookup: string;
  secretHash: string;
  ownerId: string;
  capabilities: Capability[];
  scope: KeyScope;
  allowedIps: string[];
  allowedOrigins: string[];
  expiresAt: Date | null;
  rateLimitPerMin: number | null;
  status: 'active' | 'revoked';
  createdAt: Date;
  updatedAt: Date;
  rotatedAt: Date | null;
  revokedAt: Date | null;
}

export interface CounterDoc {
  _id: string;
  siteId: string;
  n: number;
  expiresAt: Date;
  /** Sign-in budgets: when the period's first attempt came (the backoff counts from it). */
  since?: Date;
}

export function accessCollections(db: Db) {
  return {
    users: db.collection<UserDoc>(ACCESS_COLLECTIONS.users),
    roles: db.collection<RoleDoc>(ACCESS_COLLECTIONS.roles),
    sessions: db.collection<SessionDoc>(ACCESS_COLLECTIONS.sessions),
    apiKeys: db.collection<ApiKeyDoc>(ACCESS_COLLECTIONS.apiKeys),
    audit: db.collection<AuditDoc>(ACCESS_COLLECTIONS.audit),
    counters: db.collection<CounterDoc>(ACCESS_COLLECTIONS.counters),
    invitations: db.collection<InvitationDoc>(ACCESS_COLLECTIONS.invitations),
    passwordResets: db.collection<PasswordResetDoc>(ACCESS_COLLECTIONS.passwordResets),
  };
}
