import { z } from 'zod';
import type { Operation } from '../../services/core/operation.ts';
import { pathParamNames } from '../../services/core/operation.ts';

type JsonSchema = Record<string, unknown>;

/**
 * A valid input for any operation, built from its own zod input (as JSON Schema): every required
 * property, plus the optional one named `with` (one at a time, as a client filters a list: the
 * sweep calls each operation once bare and once per optional property; nested objects are filled
 * whole). `known` supplies meaningful values by property name (ids of seeded documents, a slug
 * that exists); anything else is made up within the schema (enum → first member, pattern-shaped
 * strings for the slug and date patterns, bounds respected).
 */
/** A known value that leaves the property out (a cursor: a made-up one is refused). */
export const OMIT = Symbol('omit');

export interface SampleOptions {
  /** The optional top-level property to add; nested objects always get every property. */
  with?: string;
  /**
   * Values by property name; a function gets the operation (names mean different things in
   * different operations) and answers undefined to let the schema decide, `OMIT` to leave it out.
   */
  known: Record<string, unknown>;
  /** A fresh suffix for made-up unique strings. */
  unique: () => string;
}

const SLUG_PATTERN = '^[a-z0-9]+(?:-[a-z0-9]+)*$';

function sampleString(schema: JsonSchema, options: SampleOptions): string {
  const pattern = typeof schema.pattern === 'string' ? schema.pattern : '';
  if (schema.format === 'date-time' || pattern.includes('-02-29')) return new Date(Date.now() + 86_400_000).toISOString();
  if (schema.format === 'email') return `sweep-${options.unique()}@example.test`;
  if (schema.format === 'uri') return 'https://example.test/sweep';
  if (pattern.startsWith('^\\/')) return `/sweep-${options.unique()}`;
  const base = pattern === SLUG_PATTERN || pattern.startsWith('^[a-z') ? `sweep-${options.unique()}` : 'sweep';
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  return base.padEnd(min, 'x');
}

function sample(schema: JsonSchema, options: SampleOptions, operation: Operation): unknown {
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const choices = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (choices) return sample(choices.find((choice) => choice.type !== 'null') ?? choices[0], options, operation);
  const type = Array.isArray(schema.type) ? (schema.type as string[]).find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return sampleString(schema, options);
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? Math.max(schema.minimum, 1) : 1;
    case 'boolean':
      return true;
    case 'array': {
      const count = Math.max(typeof schema.minItems === 'number' ? schema.minItems : 0, 1);
      return Array.from({ length: count }, () => sample((schema.items as JsonSchema) ?? {}, options, operation));
    }
    case 'object':
      return sampleObject(schema, options, operation, false);
    default:
      return 'default' in schema ? schema.default : null;
  }
}

function sampleObject(schema: JsonSchema, options: SampleOptions, operation: Operation, topLevel: boolean): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const out: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(properties)) {
    if (!required.has(name) && topLevel && name !== options.with) continue;
    const known = options.known[name];
    const value = typeof known === 'function' ? (known as (op: Operation) => unknown)(operation) : known;
    if (value === OMIT) continue;
    if (value !== undefined) {
      out[name] = value;
      continue;
    }
    if (!required.has(name) && 'default' in property) continue;
    out[name] = sample(property, options, operation);
  }
  return out;
}

const inputSchema = (operation: Operation) => z.toJSONSchema(operation.input, { io: 'input', unrepresentable: 'any' }) as JsonSchema;

/** The operation's optional top-level properties (path parameters are always required). */
export function optionalProperties(operation: Operation): string[] {
  const schema = inputSchema(operation);
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return Object.keys((schema.properties ?? {}) as object).filter((name) => !required.has(name));
}

/** The operation's input, split as the REST surface sends it: path parameters, query or body. */
export function sampleInput(operation: Operation, options: SampleOptions) {
  const schema = inputSchema(operation);
  const input = sampleObject(schema, options, operation, true);
  const params = Object.fromEntries(pathParamNames(operation.path).map((name) => [name, String(input[name] ?? 'none')]));
  const rest = Object.fromEntries(Object.entries(input).filter(([name]) => !(name in params)));
  return { input, params, rest, parses: operation.input.safeParse(input).success };
}
