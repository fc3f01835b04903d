import type { Db } from 'mongodb';
import { UnauthorizedError } from '../core/errors.ts';
import { writeFailureAudit } from './audit.ts';

/**
 * Why a bearer key was refused, for the audit log only. The caller always gets the same generic
 * 401 body, whatever the reason (a switched-off Management API is a 403 before any of this, unaudited).
 */
export type FailureReason =
  'missing' | 'malformed' | 'unknown' | 'secret-mismatch' | 'revoked' | 'expired' | 'owner-missing' | 'ip-not-allowed' | 'origin-not-allowed';

export async function refuse(db: Db, siteId: string, at: Date, facts: { ip: string; keyId?: string | null; reason: FailureReason }): Promise<never> {
  await writeFailureAudit(db, siteId, at, { action: 'auth.failed', keyId: facts.keyId ?? null, ip: facts.ip, reason: facts.reason });
  throw new UnauthorizedError();
}
