import { z } from 'zod';

const UNITS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
/** A year: no setting or request asks to keep a deleted workspace longer. */
const MAX_MS = 365 * UNITS.d;

/**
 * A duration written as whole units, `<n>d`, `<n>h`, `<n>m` or `<n>s` (`7d`, `36h`, `90s`), or `0`:
 * the format of `WORKSPACE_DELETE_GRACE` and of the deletion's `grace` (docs/lifecycle.md).
 * Parsed into milliseconds; anything else, or more than 365 days, is refused naming the format.
 */
export const DurationText = z.string().transform((text, ctx) => {
  const match = /^(\d{1,6})([smhd])$/.exec(text.trim());
  const ms = text.trim() === '0' ? 0 : match ? Number(match[1]) * UNITS[match[2] as keyof typeof UNITS] : Number.NaN;
  if (Number.isFinite(ms) && ms <= MAX_MS) return ms;
  ctx.addIssue({ code: 'custom', message: 'must be a duration such as 7d, 36h, 90m or 30s (at most 365d), or 0' });
  return z.NEVER;
});
