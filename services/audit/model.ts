import type { Collection, Db } from 'mongodb';
import type { AuditSummary, AuditTarget } from '../core/audit-notes.ts';

/**
 * The audit log's rows, in each workspace database and in the platform database: the trail's change
 * rows (this folder) and the access feature's failure rows (services/access/audit.ts). Held here,
 * below access, because the trail reads and writes them and access stands on the trail
 * (`recordChange`, the retention pass).
 */
export const AUDIT_COLLECTION = 'audit_log';

export interface AuditDoc {
  _id: string;
  siteId: string;
  at: Date;
  action: string;
  keyId: string | null;
  userId: string | null;
  ip: string;
  reason: string | null;
  /** Aggregated failure rows only: window start and subject digest (see `writeFailureAudit`). */
  agg?: string;
  /** Failures folded into this row (aggregated rows only; absent means one). */
  count?: number;
  /** The last of them. */
  lastAt?: Date;
  /** Dropped after this (TTL index; the worker's purge where TTL does not run): failure rows and change rows. */
  expiresAt?: Date;
  /** Change rows (docs/audit.md): `userId`/`keyId` above are the actor's. */
  workspaceId?: string;
  /** A change made by the system (workflow, activity): its reason; null otherwise. */
  system?: string | null;
  target?: AuditTarget | null;
  summary?: AuditSummary | null;
  requestId?: string;
  /** The operation that made the change (null for a workflow's own change). */
  operation?: string | null;
}

export const auditRows = (db: Db): Collection<AuditDoc> => db.collection<AuditDoc>(AUDIT_COLLECTION);
