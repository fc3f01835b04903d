import { z } from 'zod';
import type { Services } from '../../core/context.ts';
import { MOVE_CHANGES_COLLECTION, type MoveChange } from '../../core/placement.ts';

/** A move's states (`running` → `succeeded` | `failed`) and steps, in order (docs/placement.md). */
export const MOVE_ROW_STATES = ['running', 'succeeded', 'failed'] as const;
export const MOVE_STEPS = ['copying', 'catching-up', 'switching', 'cleaning', 'done'] as const;
export type MoveStep = (typeof MOVE_STEPS)[number];

export interface MoveProgress {
  collections: number;
  collectionsDone: number;
  documents: number;
  catchUpPasses: number;
  /** Writes made during the move and copied again (recorded changes applied). */
  changesApplied: number;
}

/** One move of a workspace to another cluster, in `${DB_PREFIX}platform.moves`; `_id` is time-ordered (newId). */
export interface MoveRow {
  _id: string;
  workspaceId: string;
  from: string;
  to: string;
  state: (typeof MOVE_ROW_STATES)[number];
  step: MoveStep;
  progress: MoveProgress;
  /** Collections copied whole (a retried copy skips them). */
  copied: string[];
  /** When writes were first refused, and when the switch let them go again. */
  switchStartedAt: Date | null;
  switchEndedAt: Date | null;
  /** Collections whose counts differed just before the switch (compared again under it, with those written since). */
  unverified?: string[];
  /** Set when the switch's final catch-up began: a retry of it compares every collection. */
  finalPassStarted?: boolean;
  /** Where the switch's time went (ms): the refusal pushed, the drain, the last catch-up, the verification, the switch pushed. */
  switchTimings?: Record<string, number>;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

export const moveCollections = (services: Pick<Services, 'platformDb'>) => ({
  moves: services.platformDb.collection<MoveRow>('moves'),
  changes: services.platformDb.collection<MoveChange>(MOVE_CHANGES_COLLECTION),
});

export const MoveView = z.object({
  id: z.string(),
  tenantId: z.string(),
  from: z.string(),
  to: z.string(),
  state: z.enum(MOVE_ROW_STATES),
  step: z.enum(MOVE_STEPS),
  progress: z.object({
    collections: z.number().int(),
    collectionsDone: z.number().int(),
    documents: z.number().int(),
    catchUpPasses: z.number().int(),
    changesApplied: z.number().int(),
  }),
  /** How long writes were refused by the switch (ms), once it is over. */
  refusedWritesMs: z.number().int().nullable(),
  error: z.string().nullable(),
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
});

export const moveView = (row: MoveRow): z.infer<typeof MoveView> => ({
  id: row._id,
  tenantId: row.workspaceId,
  from: row.from,
  to: row.to,
  state: row.state,
  step: row.step,
  progress: row.progress,
  refusedWritesMs: row.switchStartedAt && row.switchEndedAt ? row.switchEndedAt.getTime() - row.switchStartedAt.getTime() : null,
  error: row.error,
  createdAt: row.createdAt.toISOString(),
  finishedAt: row.finishedAt?.toISOString() ?? null,
});
