import { defineSignal } from '@temporalio/workflow';

// The contract of workspace backups and restores (docs/backups.md): shared by the workflows, their
// activities and the platform operations that start them. Pure: signal definitions and types only.

/** The workflow types; equal the functions' names exported from workflows/index.ts. */
export const backupWorkflowType = 'backupWorkflow';
export const restoreWorkflowType = 'restoreWorkflow';

/** One run per backup and per restore; a workspace's restores are also serialized by its row (platform/backup). */
export const backupWorkflowId = (workspaceId: string, backupId: string) => `backup:${workspaceId}:${backupId}`;
export const restoreWorkflowId = (workspaceId: string, restoreId: string) => `restore:${workspaceId}:${restoreId}`;

export interface BackupRef {
  workspaceId: string;
  backupId: string;
}

export interface RestoreRef {
  workspaceId: string;
  restoreId: string;
  backupId: string;
}

/** What a backup copies, decided once under the write hold (names only: the bytes never travel through Temporal). */
export interface BackupPlan {
  /** Every collection of the workspace database but GridFS chunk collections, in name order. */
  collections: string[];
  /** GridFS bucket names (`<bucket>.files` + `<bucket>.chunks`): their files are copied as media files. */
  buckets: string[];
}

/** One call's share of a bucket's files; the workflow loops until `done` (cancel is honoured in between). */
export interface MediaBatchResult {
  copied: number;
  done: boolean;
}

export type BackupEnd = { state: 'cancelled' | 'failed'; error: string | null };

/** Error type names activities raise as non-retryable (ApplicationFailure type). */
export const BACKUP_ERRORS = {
  /** The workspace is not in a state the step applies to (deleted, suspended before a backup). */
  workspaceState: 'BackupWorkspaceState',
  /** A part of the archive does not match its manifest (tampered, truncated, foreign). */
  verification: 'BackupVerification',
} as const;

/** Stops a running backup between two steps; what was written is removed and the hold released. */
export const cancelBackupSignal = defineSignal('cancelBackup');

/** Scheduled backups: one Temporal Schedule per workspace starts this workflow (which runs a backup as its child, then prunes). */
export const scheduledBackupWorkflowType = 'scheduledBackupWorkflow';
export const backupScheduleId = (workspaceId: string) => `backup-schedule:${workspaceId}`;
/** The schedule's workflow id; Temporal adds the time of each start to it. */
export const scheduledBackupWorkflowId = (workspaceId: string) => `scheduled-backup:${workspaceId}`;

export interface ScheduledBackupInput {
  workspaceId: string;
  /** Scheduled backups kept (the oldest succeeded ones beyond it are deleted); manual ones are never pruned. */
  keep: number;
}
