/**
 * The one rule for a URL that becomes a link, an image or a media source (the static export
 * renders it, the APIs accept and serve it): only `http`, `https`, `mailto` and `tel`, or a
 * reference without a scheme (a path, `?query`, `#fragment`). Everything else — `javascript:`,
 * `vbscript:`, `data:`, `file:`, unknown schemes — is refused.
 *
 * The scheme is read the way a browser reads it (WHATWG URL parser): leading and trailing C0
 * controls and spaces are stripped, then every ASCII tab and newline is removed wherever it is,
 * then the scheme is the run of `[A-Za-z][A-Za-z0-9+.-]*` before the first `:`. So
 * `java\tscript:`, `\x01javascript:`, ` JaVaScRiPt:` and `\njavascript:` are all `javascript:`.
 * A reference starting with two slashes (or a backslash in their place, which browsers read as a
 * slash) leaves the site without a scheme: refused too, as are control characters left inside.
 */
import { z } from 'zod';

const SCHEMES = new Set(['http', 'https', 'mailto', 'tel']);
/** The keys that hold a link in free-form data (blocks, widget settings): checked wherever they sit. */
const LINK_KEYS = new Set(['url', 'src', 'href']);
const MAX_DEPTH = 64;

export const SAFE_URL_RULE = 'must be an http, https, mailto or tel URL, a path or a #fragment';

/** What a browser makes of the string before reading its scheme (WHATWG "basic URL parser", first steps). */
const browserForm = (raw: string) => raw.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '').replace(/[\t\n\r]/g, '');

/** The URL as it may be rendered (cleaned as a browser would), or null when it must not become a link. */
export function safeUrl(raw: string): string | null {
  const url = browserForm(raw);
  if (!url || /[\u0000-\u001f\u007f]/.test(url)) return null;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(url);
  if (scheme) return SCHEMES.has(scheme[1].toLowerCase()) ? url : null;
  return /^[\\/]{2}/.test(url) ? null : url;
}

/** Refused on input: a URL that is not empty (an empty one is "no link") and not safe. */
const refused = (raw: string) => browserForm(raw) !== '' && safeUrl(raw) === null;

/** A URL field of an input: refused (400 naming the field) unless it is empty or `safeUrl` accepts it. */
export const SafeUrlString = z
  .string()
  .max(2000)
  .refine((v) => !refused(v), SAFE_URL_RULE);

/** Where the first refused link of free-form data is (a path of keys and indexes), or null. */
export function findUnsafeLink(value: unknown, path: (string | number)[] = [], depth = 0): (string | number)[] | null {
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return null;
  const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  for (const [key, item] of entries) {
    if (typeof key === 'string' && LINK_KEYS.has(key) && typeof item === 'string' && refused(item)) return [...path, key];
    const found = findUnsafeLink(item, [...path, key], depth + 1);
    if (found) return found;
  }
  return null;
}

/** A zod check for free-form data that may carry links (blocks, widget settings). */
export function refuseUnsafeLinks(value: unknown, ctx: z.core.$RefinementCtx): void {
  const at = findUnsafeLink(value);
  if (at) ctx.addIssue({ code: 'custom', message: SAFE_URL_RULE, path: at });
}
