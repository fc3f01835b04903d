import type { Db } from 'mongodb';
import { newId } from '../core/ids.ts';
import { accessCollections } from './model.ts';

export interface AuditEntry {
  action: 'key.created' | 'key.rotated' | 'key.revoked' | 'key.updated' | 'key.deleted' | 'auth.failed' | 'login.failed';
  keyId?: string | null;
  userId?: string | null;
  ip: string;
  reason?: string | null;
}

/** Audit rows name keys by id only; no secret, hash or lookup part is ever written here. */
export async function writeAudit(db: Db, siteId: string, at: Date, entry: AuditEntry): Promise<void> {
  await accessCollections(db).audit.insertOne({
    _id: newId(at.getTime()),
    siteId,
    at,
    action: entry.action,
    keyId: entry.keyId ?? null,
    userId: entry.userId ?? null,
    ip: entry.ip,
    reason: entry.reason ?? null,
  });
}
