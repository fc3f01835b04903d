import { z } from 'zod';

/** Settings are free-form JSON, within bounds that keep the one settings document small and safe. */
const MAX_DEPTH = 6;
const MAX_BYTES = 64 * 1024;
const KEY = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function checkValue(value: unknown, depth: number, path: string): string | null {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return null;
  if (typeof value === 'number') return Number.isFinite(value) ? null : `${path}: must be a finite number`;
  if (depth > MAX_DEPTH) return `${path}: nested too deeply`;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const problem = checkValue(item, depth + 1, `${path}.${index}`);
      if (problem) return problem;
    }
    return null;
  }
  if (typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      // Keys become MongoDB field paths: no `$`, no `.`, nothing odd.
      if (!KEY.test(key)) return `${path ? `${path}.` : ''}${key}: invalid setting name`;
      const problem = checkValue(item, depth + 1, path ? `${path}.${key}` : key);
      if (problem) return problem;
    }
    return null;
  }
  return `${path}: unsupported value`;
}

/** A PATCH body: objects merge, `null` removes a key. `api.publicEnabled` is the Public API switch. */
export const SettingsPatchSchema = z
  .record(z.string(), z.unknown())
  .superRefine((value, ctx) => {
    const problem = checkValue(value, 0, '');
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
    else if (JSON.stringify(value).length > MAX_BYTES) ctx.addIssue({ code: 'custom', message: 'settings too large' });
  })
  .pipe(
    z.looseObject({
      api: z.object({ publicEnabled: z.boolean().optional(), commentsEnabled: z.boolean().optional() }).strict().nullable().optional(),
      title: z.string().max(200).nullable().optional(),
      private: z.record(z.string(), z.unknown()).nullable().optional(),
      // docs/accounts.md: the From address of the site's mails, and whether every user needs a second factor.
      email: z
        .object({ from: z.email().max(254).nullable().optional() })
        .strict()
        .nullable()
        .optional(),
      accounts: z
        .object({ twoFactor: z.enum(['optional', 'required']).nullable().optional() })
        .strict()
        .nullable()
        .optional(),
    }),
  )
  .transform((value) => value as Record<string, Json>);

export const SettingsView = z.record(z.string(), z.unknown());
