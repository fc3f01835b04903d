import type { Operation } from './operation.ts';
import type { OperationContext, Services } from './context.ts';
import type { Site, Workspace } from './tenants.ts';
import type { PublicCollection } from './public-generation.ts';
import type { CreateIndexesOptions, Document, IndexSpecification } from 'mongodb';

/**
 * An index a feature needs in every workspace database that uses the collection: made with the
 * collection's first write (`first-write.ts`), dropped by the index upgrade once no feature declares
 * it. Every key list should lead with `siteId`.
 */
export interface IndexSpec {
  collection: string;
  keys: IndexSpecification;
  options?: CreateIndexesOptions;
}

/** Details of a new workspace that features may need while provisioning it. */
export interface ProvisionInput {
  /** `passwordHash` when the password was hashed earlier (workspace actor provisioning). */
  admin: { email: string; password?: string; passwordHash?: string; name?: string; platformOperator?: boolean };
}

/** One row of `GET /trash`. */
export interface TrashedItem {
  kind: string;
  id: string;
  title: string;
  trashedAt: string;
}

/** Where a page of `GET /trash` ends: the trash sorts by `trashedAt` then id, both descending. */
export interface TrashMark {
  trashedAt: Date;
  id: string;
}

/** The rows of one trash store after `mark` (all when null), for a `{ trashedAt: -1, _id: -1 }` sort. */
export function trashedAfter(mark: TrashMark | null): Record<string, unknown> {
  if (!mark) return {};
  return { $or: [{ trashedAt: { $lt: mark.trashedAt } }, { trashedAt: mark.trashedAt, _id: { $lt: mark.id } }] };
}

/**
 * A kind of thing that can sit in the trash (entries, media, menus). `/trash` lists, restores and
 * purges through these, so each feature keeps its own storage and its own purge (media drops bytes).
 */
export interface TrashKind {
  kind: string;
  /** Up to `limit` items after `mark`, most recently trashed first (`trashedAt`, then id, descending). */
  list(ctx: OperationContext, limit: number, mark: TrashMark | null): Promise<TrashedItem[]>;
  /** Returns false when there is no such trashed item. */
  restore(ctx: OperationContext, id: string): Promise<boolean>;
  purge(ctx: OperationContext, id: string): Promise<boolean>;
}

/** Counts by name: what a feature stopped, or its usage figures named as the quota they measure (`users`, `entries`). */
export type Figures = Readonly<Record<string, number>>;

/** What retention removes, by kind: the usage's `retention.freed` names and the removal counter's `kind` label. */
export const RETENTION_KINDS = ['deliveries', 'attempts', 'audit', 'revisions', 'trash'] as const;
export type RetentionKind = (typeof RETENTION_KINDS)[number];

/** A workspace's retention as the periodic pass applies it (docs/platform.md, "Retention"); null: kept for ever. */
export interface RetentionRules {
  /** Finished webhook deliveries and their attempts. */
  deliveryHistoryDays: number | null;
  /** Change audit rows (the workspace's `auditRetentionDays`, set by its administrators: docs/audit.md). */
  auditDays: number;
  /** Revisions per entry: the last `revisionsKept` and every one newer than `revisionsDays` stay (and always the current and the published one). */
  revisionsKept: number | null;
  revisionsDays: number;
  /** Trashed items of every kind, purged as `DELETE /trash` purges them. */
  trashDays: number | null;
}

/** One site's share of a retention pass. */
export interface RetentionRun {
  rules: RetentionRules;
  now: Date;
  /** At most this many rows of each kind are removed (or, for a scan, read) for the site in this pass; the rest waits for the next. */
  budget: number;
  /** Where this feature's scan stopped in the site's last pass (what it returned as `resumeAt`), null to start over. */
  resumeFrom: Record<string, unknown> | null;
}

export interface RetentionResult {
  removed: Partial<Record<RetentionKind, number>>;
  /** Where to go on next pass (null: the scan reached the end, start over). */
  resumeAt?: Record<string, unknown> | null;
}

/** A new workspace made by a clone, its data loaded (docs/backups.md, "Clone"). */
export interface ClonedWorkspace {
  sourceWorkspaceId: string;
  /** The new sites, in the source's order: the first takes the request's domains and administrator. */
  sites: readonly Site[];
  /** The request's administrator (the password already hashed). */
  admin: ProvisionInput['admin'];
}

/**
 * What a clone does to a feature's own data (docs/backups.md, "Clone"). Site ids are remapped in
 * every document by the clone itself; the rest is the feature's: a clone never accepts a secret of
 * its source, nor carries its traffic or meters.
 */
export interface CloneHooks {
  /** The feature's collections a clone does not copy (the source's credentials, counters, traffic). */
  leftBehind?: readonly string[];
  /**
   * How each copied document of `collection` changes on its way into the clone (its site ids
   * already remapped; null from it leaves that document behind), or null when the collection is
   * copied as it is. Pure: a retry loads the part again.
   */
  rewrite?(services: Services, collection: string, now: Date): ((doc: Document) => Document | null) | null;
  /**
   * The data loaded and the new sites recorded, before the workspace turns active: what the
   * feature's data needs in the new workspace (the administrator, schedule timers). Idempotent.
   */
  afterClone?(services: Services, workspace: Workspace, clone: ClonedWorkspace): Promise<void>;
}

/**
 * A feature folder's public face: its operations, the indexes it needs in each workspace database,
 * what it sets up when a workspace is created, and what it answers for when the platform runs
 * across features (deletion, usage, a password change, a clone), so the platform never reads another
 * feature's collections. `services/features.ts` lists them all.
 */
export interface Feature {
  name: string;
  operations: readonly Operation[];
  indexes?: readonly IndexSpec[];
  trash?: readonly TrashKind[];
  /** Collections the Public API reads: a write to one moves the site's public generation (core/public-generation.ts), an insert only if it can be public. */
  publicCollections?: readonly PublicCollection[];
  provisionSite?(ctx: OperationContext, input: ProvisionInput): Promise<void>;
  /**
   * Deletion: stops what the feature keeps running for a workspace that is `deleting` (workflows,
   * pending work that a drain would restart). Idempotent; answers how many of each it stopped.
   */
  stopWork?(services: Services, workspace: Workspace): Promise<Figures>;
  /**
   * Undelete: starts again what `stopWork` stopped and the workspace's data still asks for (entry
   * schedules, the backup schedule). Idempotent; answers how many of each it started.
   */
  resumeWork?(services: Services, workspace: Workspace): Promise<Figures>;
  /** Usage: the feature's figures for one site, or for the whole workspace when `siteId` is null. */
  usage?(services: Services, workspace: Workspace, siteId: string | null): Promise<Figures>;
  /** A user's password changed: end what the old one opened in this feature (OAuth grants). */
  userPasswordChanged?(ctx: OperationContext, userId: string, now: Date): Promise<void>;
  /**
   * Retention (the worker's periodic pass, platform/retention.ts): removes the site's rows that are
   * due under `run.rules`, at most `run.budget` of each kind, each query served by an index.
   */
  retention?(ctx: OperationContext, run: RetentionRun): Promise<RetentionResult>;
  /** Clone: what of the feature's data a clone leaves behind or changes, and sets up afterwards. */
  clone?: CloneHooks;
}
