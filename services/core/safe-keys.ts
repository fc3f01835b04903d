/**
 * Object keys that MongoDB would read as something other than data. Inputs carry free-form objects
 * (entry `fields`, settings, widget settings, menu layouts, block attributes); a key holding a NUL
 * byte makes the driver throw, and a key starting with `$` would be read as an operator wherever an
 * object reaches a filter or an update. Neither is ever a legitimate name, so every input is
 * checked once, before validation, and such a key is a 400 naming where it is.
 * Dots are refused only where a free-form object's keys could become update paths (`noDots`).
 */
import { z } from 'zod';

const MAX_DEPTH = 64;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

const show = (key: string) => JSON.stringify(key);

/** Where the first unsafe key is and why, or null. */
export function findUnsafeKey(value: unknown, options: { noDots?: boolean } = {}, path = '', depth = 0): string | null {
  if (depth > MAX_DEPTH) return `${path || 'input'}: nested too deeply`;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      const found = findUnsafeKey(value[i], options, path ? `${path}.${i}` : String(i), depth + 1);
      if (found) return found;
    }
    return null;
  }
  if (!isPlainObject(value)) return null;
  for (const [key, item] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    if (key.includes('\u0000')) return `${path ? `${path}: key` : 'key'} ${show(key)} holds a NUL character`;
    if (key.startsWith('$')) return `${path ? `${path}: key` : 'key'} ${show(key)} may not start with $`;
    if (options.noDots && key.includes('.')) return `${path ? `${path}: key` : 'key'} ${show(key)} may not contain a dot`;
    const found = findUnsafeKey(item, options, at, depth + 1);
    if (found) return found;
  }
  return null;
}

/**
 * A free-form object of an input (entry `fields`, widget settings, menu layout and design). Its
 * keys are data: no `$`, no NUL (checked for every input) and no dots either, so no key can ever
 * be read as a path into the stored document.
 */
export const FreeFormObject = z.record(z.string().max(200), z.unknown()).superRefine((value, ctx) => {
  const problem = findUnsafeKey(value, { noDots: true });
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
