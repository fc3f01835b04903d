import { z } from 'zod';
import { RETENTION_KINDS, type RetentionKind, type RetentionRules } from '../core/feature.ts';

/**
 * A workspace's retention (docs/platform.md, "Retention"), set by operators with its quotas and
 * switches (`retention` in `PUT /tenants/{id}/quotas`). An absent name takes its default; `null`
 * keeps that kind for ever. Audit rows keep their own setting (`PUT /audit/retention`, the
 * workspace's administrators: docs/audit.md); the pass reads both into one `RetentionRules`.
 */
export const RETENTION_DEFAULTS = { deliveryHistoryDays: 30, revisionsKept: 50, revisionsDays: 30, trashDays: 30 } as const;

const MAX_DAYS = 3650;
const Days = z.union([z.number().int().min(1).max(MAX_DAYS), z.null()]);

export const RetentionSettings = z
  .object({
    /** Finished webhook deliveries and their attempts. */
    deliveryHistoryDays: Days.optional(),
    /** Revisions each entry keeps whatever their age (its current and published ones always stay). */
    revisionsKept: z.union([z.number().int().min(1).max(10_000), z.null()]).optional(),
    /** Revisions newer than this stay whatever their number (0: only the last `revisionsKept`). */
    revisionsDays: z.number().int().min(0).max(MAX_DAYS).optional(),
    /** Trashed items of every kind are purged this long after they were trashed. */
    trashDays: Days.optional(),
  })
  .strict();

/** The rules in force: the workspace's `retention` quota over the defaults (a stored set that no longer parses counts as unset). */
export function retentionRules(workspaceQuotas: Record<string, unknown> | undefined, auditDays: number): RetentionRules {
  const parsed = RetentionSettings.safeParse(workspaceQuotas?.retention ?? {});
  const set = parsed.success ? parsed.data : {};
  const pick = <K extends keyof typeof RETENTION_DEFAULTS>(name: K) => (set[name] === undefined ? RETENTION_DEFAULTS[name] : set[name]);
  return {
    deliveryHistoryDays: pick('deliveryHistoryDays'),
    auditDays,
    revisionsKept: pick('revisionsKept'),
    revisionsDays: pick('revisionsDays'),
    trashDays: pick('trashDays'),
  };
}

/**
 * The usage's `retention` (`GET /tenants/{id}/usage`, and a site's, which shows its workspace's):
 * the rules in force and what the pass has freed since the workspace exists, by kind.
 */
export const RetentionView = z.object({
  rules: z.object({
    deliveryHistoryDays: z.number().int().nullable(),
    auditDays: z.number().int(),
    revisionsKept: z.number().int().nullable(),
    revisionsDays: z.number().int(),
    trashDays: z.number().int().nullable(),
  }),
  freed: z.object(Object.fromEntries(RETENTION_KINDS.map((kind) => [kind, z.number().int()])) as Record<RetentionKind, z.ZodNumber>),
  /** When the pass last removed something; null: never. */
  lastFreedAt: z.string().nullable(),
});
