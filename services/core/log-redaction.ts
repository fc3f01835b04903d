/** What a redacted value is written as. */
export const REDACTED = '[redacted]';

/** Fields that carry a secret wherever they appear one level down a log line (`*.password`, …). */
const SECRET_FIELDS = ['password', 'secret', 'key', 'secretHash', 'token'] as const;

/** Headers that carry a credential: under a line's `req` or `res` object, or its own `headers`. */
const CREDENTIAL_HEADERS = new Map<string, readonly string[]>([
  ['req', ['authorization', 'cookie', 'x-api-key']],
  ['res', ['set-cookie']],
]);
const OWN_CREDENTIAL_HEADERS = ['authorization', 'cookie'] as const;

/** The documented redaction, as paths (docs/observability.md). */
export const redactedPaths = [
  ...[...CREDENTIAL_HEADERS].flatMap(([key, headers]) => headers.map((header) => `${key}.headers["${header}"]`)),
  ...SECRET_FIELDS.map((field) => `*.${field}`),
  ...OWN_CREDENTIAL_HEADERS.map((header) => `headers.${header}`),
];

const isPlain = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
};

/** The names among `fields` that `value` holds as own, defined properties (what JSON writes); undefined for none. */
function heldFields(value: object, fields: readonly string[]): string[] | undefined {
  let held: string[] | undefined;
  for (const field of fields) if (Object.hasOwn(value, field) && (value as Record<string, unknown>)[field] !== undefined) (held ??= []).push(field);
  return held;
}

/** A copy of `value` (same prototype and own properties, non-enumerable ones too) with `fields` censored. */
function censored<T extends object>(value: T, fields: readonly string[] | undefined): T {
  if (!fields) return value;
  const copy = Object.create(Object.getPrototypeOf(value) as object | null, Object.getOwnPropertyDescriptors(value)) as Record<string, unknown>;
  for (const field of fields) copy[field] = REDACTED;
  return copy as T;
}

/** One top-level value of a line, redacted, or the same value when nothing in it is secret. */
function redactValue(key: string, value: object): object {
  let result = censored(value, heldFields(value, SECRET_FIELDS));
  if (key === 'headers') return isPlain(result) ? censored(result, heldFields(result, OWN_CREDENTIAL_HEADERS)) : result;
  // A request or reply object (a class instance) is written by its serializer, which leaves its
  // headers out: only a plain object logged under these keys brings headers into the line.
  const names = CREDENTIAL_HEADERS.get(key);
  const headers = names && isPlain(value) ? (value as { headers?: unknown }).headers : undefined;
  if (names && typeof headers === 'object' && headers !== null && isPlain(headers)) {
    const redacted = censored(headers, heldFields(headers, names));
    if (redacted !== headers) result = { ...result, headers: redacted };
  }
  return result;
}

/**
 * The logger's redaction (pino's `formatters.log` and `formatters.bindings`): a line whose values
 * hold a documented secret is written from a copy with each one replaced by `[redacted]`; the
 * caller's objects are never changed, and a line with no secret is the same object (no copy).
 * A child logger's bindings are written as given (pino formats only the root's): the service makes
 * no child logger but Fastify's per request, bound to its request id.
 *
 * Why not pino's `redact` option: its redactor parses every path, character by character, for each
 * value of every line (the `*.` paths reach them all) and looks the fresh strings up with `in`: 6 % of
 * the CPU of a cached answer, whose access line has no secret (bench/RESULTS.md, session 13).
 */
export function redactLogLine<T extends object>(line: T): T {
  const fields = line as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (const key in fields) {
    const value = fields[key];
    if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
    const redacted = redactValue(key, value);
    if (redacted !== value) (copy ??= { ...fields })[key] = redacted;
  }
  return (copy as T | undefined) ?? line;
}
