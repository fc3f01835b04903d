import { z } from 'zod';
import type { Services } from '../../core/context.ts';

/** A backup's states: `running` → `succeeded` | `failed` | `cancelled` (docs/backups.md). */
export const BACKUP_STATES = ['running', 'succeeded', 'failed', 'cancelled'] as const;
export type BackupState = (typeof BACKUP_STATES)[number];
export const BACKUP_TRIGGERS = ['manual', 'scheduled', 'clone', 'final'] as const;
export const RESTORE_STATES = ['running', 'succeeded', 'failed'] as const;

export interface BackupProgress {
  collections: number;
  collectionsDone: number;
  documents: number;
  mediaFiles: number;
  mediaFilesDone: number;
  /** Bytes written to the store so far (the archive's size once succeeded). */
  bytes: number;
}

/** One backup, in `${DB_PREFIX}platform.backups`; `_id` is time-ordered (newId). */
export interface BackupRow {
  _id: string;
  workspaceId: string;
  state: BackupState;
  /** `clone`: taken by `POST /tenants { fromWorkspace }` and removed once the clone ends; `final`: taken by a deleted workspace's purge before its database goes (docs/lifecycle.md). */
  trigger: (typeof BACKUP_TRIGGERS)[number];
  progress: BackupProgress;
  /** The GridFS buckets the plan found (written by the first step). */
  buckets?: string[];
  /** Where each bucket's file copy stands (canonical EJSON of the last file id copied). */
  mediaAfter?: Record<string, string>;
  /** Set by a cancel: the running step stops at the next collection or file (the workflow hears the signal too). */
  cancelRequested?: boolean;
  /** sha256 of the stored manifest, recorded when it is written: a restore refuses any other manifest. */
  manifestSha256: string | null;
  error: string | null;
  createdAt: Date;
  finishedAt: Date | null;
  updatedAt: Date;
}

/** One stored part of a backup (a collection's NDJSON or a media file), recorded once it is whole in the store. */
export interface BackupPartRow {
  /** `<backupId>/<key>` */
  _id: string;
  backupId: string;
  kind: 'collection' | 'media';
  /** The object key under the backup's folder (`collections/…`, `media/…`). */
  file: string;
  /** Collection name, or the bucket of a media file. */
  name: string;
  /** A media file's id, canonical EJSON. */
  id?: string;
  documents: number;
  bytes: number;
  sha256: string;
}

export interface RestoreRow {
  _id: string;
  workspaceId: string;
  backupId: string;
  state: (typeof RESTORE_STATES)[number];
  /** The workspace's status when the restore was asked: it comes back to it. */
  previousStatus: 'active' | 'suspended';
  progress: { collectionsDone: number; documents: number; mediaFiles: number };
  /** Parts already restored (counted once in `progress` whatever the retries). */
  doneParts?: string[];
  /** The indexes of each collection the restore replaced (by hex of its name; load.ts `indexesToText`), kept for a retry after its drop. */
  savedIndexes?: Record<string, string>;
  /** Per site, the public generation and access version before the restore: both come back above them, never to a value a cache has seen. */
  counters?: Record<string, { generation: number; accessVersion: number }>;
  error: string | null;
  createdAt: Date;
  finishedAt: Date | null;
  updatedAt: Date;
}

export function backupCollections(services: Pick<Services, 'platformDb'>) {
  const db = services.platformDb;
  return {
    backups: db.collection<BackupRow>('backups'),
    parts: db.collection<BackupPartRow>('backup_parts'),
    restores: db.collection<RestoreRow>('restores'),
  };
}

export const emptyProgress = (): BackupProgress => ({ collections: 0, collectionsDone: 0, documents: 0, mediaFiles: 0, mediaFilesDone: 0, bytes: 0 });

export const BackupView = z.object({
  id: z.string(),
  tenantId: z.string(),
  state: z.enum(BACKUP_STATES),
  trigger: z.enum(BACKUP_TRIGGERS),
  progress: z.object({
    collections: z.number().int(),
    collectionsDone: z.number().int(),
    documents: z.number().int(),
    mediaFiles: z.number().int(),
    mediaFilesDone: z.number().int(),
    bytes: z.number().int(),
  }),
  /** The archive's stored size once succeeded, else null. */
  size: z.number().int().nullable(),
  error: z.string().nullable(),
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
});

export const backupView = (row: BackupRow): z.infer<typeof BackupView> => ({
  id: row._id,
  tenantId: row.workspaceId,
  state: row.state,
  trigger: row.trigger,
  progress: row.progress,
  size: row.state === 'succeeded' ? row.progress.bytes : null,
  error: row.error,
  createdAt: row.createdAt.toISOString(),
  finishedAt: row.finishedAt?.toISOString() ?? null,
});

export const RestoreView = z.object({
  id: z.string(),
  tenantId: z.string(),
  backupId: z.string(),
  state: z.enum(RESTORE_STATES),
  progress: z.object({ collectionsDone: z.number().int(), documents: z.number().int(), mediaFiles: z.number().int() }),
  error: z.string().nullable(),
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
});

export const restoreView = (row: RestoreRow): z.infer<typeof RestoreView> => ({
  id: row._id,
  tenantId: row.workspaceId,
  backupId: row.backupId,
  state: row.state,
  progress: row.progress,
  error: row.error,
  createdAt: row.createdAt.toISOString(),
  finishedAt: row.finishedAt?.toISOString() ?? null,
});
