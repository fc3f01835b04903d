import { z } from 'zod';
import { BlockDocumentInput, type EntryDoc, type LiveSnapshot } from './model.ts';
import { FieldsInput, HeaderRefInput, SlugSchema } from './entry-input.ts';
import { findUnsafeKey } from '../core/safe-keys.ts';
export { NDJSON_CONTENT_TYPE } from '../core/ndjson.ts';

/**
 * The NDJSON format of content import and export (docs/content.md, "Import and export"): an
 * optional first header line `{"format":"content-ndjson","version":1}`, then one entry per line.
 * Entries are keyed by `(locale, slug)`; terms are named by slug (with their name and, in a nested
 * taxonomy, their ancestors root first) so a file moves between workspaces; media are referenced
 * by id where the blocks and fields hold them, listed in `media`.
 */
export const NDJSON_FORMAT = 'content-ndjson';
export const NDJSON_VERSION = 1;

export const HeaderLine = z.object({ format: z.literal(NDJSON_FORMAT), version: z.literal(NDJSON_VERSION) }).strict();

const TermName = z.string().trim().min(1).max(200);
const TermRefObject = z.object({
  slug: SlugSchema,
  name: TermName.optional(),
  parents: z
    .array(z.object({ slug: SlugSchema, name: TermName.optional() }))
    .max(20)
    .optional(),
});
/** A term by slug: `"news"` or `{slug, name, parents}`; a missing one is created (its ancestors first). */
export type TermRef = z.output<typeof TermRefObject>;
const TermRef = z.union([SlugSchema.transform((slug): TermRef => ({ slug })), TermRefObject]);

const Title = z.string().trim().min(1).max(500);
const Excerpt = z.string().max(5000).nullable();
const IsoDate = z.iso.datetime({ offset: true }).transform((value) => new Date(value));

const LiveLine = z.object({ title: Title, slug: SlugSchema, excerpt: Excerpt.default(null), blocks: BlockDocumentInput, fields: FieldsInput.default({}) });

/** One entry line. Unknown keys are refused (a typo is not silently dropped). */
export const EntryLine = z
  .object({
    type: z.string().min(1).max(64).default('post'),
    locale: z.string().min(1).max(35).optional(),
    slug: SlugSchema,
    title: Title,
    status: z.enum(['draft', 'published', 'archived']).default('draft'),
    excerpt: Excerpt.default(null),
    blocks: BlockDocumentInput.default({ version: 1, blocks: [] }),
    fields: FieldsInput.default({}),
    terms: z.record(z.string().min(1).max(64), z.array(TermRef).max(200)).default({}),
    headerRef: HeaderRefInput.default({ mode: 'default' }),
    /** The published snapshot when it differs from the working fields (published entries only). */
    live: LiveLine.nullable().default(null),
    publishedAt: IsoDate.nullable().default(null),
    createdAt: IsoDate.optional(),
    updatedAt: IsoDate.optional(),
    /** Media ids the entry references (in its blocks or fields): informational, kept as written there. */
    media: z.array(z.string().min(1).max(200)).max(1000).optional(),
  })
  .strict()
  .superRefine((line, ctx) => {
    if (line.live && line.status !== 'published') ctx.addIssue({ code: 'custom', path: ['live'], message: 'only a published entry has a live snapshot' });
  });
export type EntryLine = z.output<typeof EntryLine>;

/** A line that is not an entry: why, in words a person can act on (`status: invalid option`). */
export function lineProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  const path = issue.path.join('.');
  return path ? `${path}: ${issue.message}` : issue.message;
}

/**
 * Whether a first line is the header (a JSON object with a top-level `format`, a key no entry line
 * may have): `undefined` when it is not, `null` when it is right, else why it is wrong.
 */
export function headerProblem(text: string): string | null | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof raw !== 'object' || raw === null || !Object.hasOwn(raw, 'format')) return undefined;
  const parsed = HeaderLine.safeParse(raw);
  return parsed.success ? null : `header ${lineProblem(parsed.error)}`;
}

/** Parses one line's text: the entry, or the reason it is refused. */
export function parseEntryLine(text: string): { line: EntryLine } | { error: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { error: 'malformed JSON' };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { error: 'a line must be a JSON object' };
  const unsafe = findUnsafeKey(raw);
  if (unsafe) return { error: unsafe };
  const parsed = EntryLine.safeParse(raw);
  return parsed.success ? { line: parsed.data } : { error: lineProblem(parsed.error) };
}

/** Every media id a block document or a fields object references (`mediaId` keys, however deep). */
export function mediaReferences(...values: unknown[]): string[] {
  const found = new Set<string>();
  const visit = (value: unknown, depth: number) => {
    if (depth > 64 || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) return value.forEach((item) => visit(item, depth + 1));
    for (const [key, item] of Object.entries(value)) {
      if (key === 'mediaId' && typeof item === 'string') found.add(item);
      else visit(item, depth + 1);
    }
  };
  values.forEach((value) => visit(value, 0));
  return [...found];
}

/** The line of a stored entry (export), given its terms named by slug. */
export function entryLineOf(doc: EntryDoc, terms: Record<string, TermRef[]>): Record<string, unknown> {
  const live = doc.live && doc.status === 'published' ? liveLineOf(doc.live) : null;
  const media = mediaReferences(doc.blocks, doc.fields, doc.live?.blocks, doc.live?.fields);
  return {
    type: doc.type,
    locale: doc.locale,
    slug: doc.slug,
    title: doc.title,
    status: doc.status,
    excerpt: doc.excerpt,
    blocks: doc.blocks,
    fields: doc.fields,
    terms,
    headerRef: doc.headerRef,
    live,
    publishedAt: doc.publishedAt?.toISOString() ?? null,
    createdAt: doc.createdAt.toISOString(),
    updatedAt: doc.updatedAt.toISOString(),
    ...(media.length ? { media } : {}),
  };
}

const liveLineOf = (live: LiveSnapshot) => ({ title: live.title, slug: live.slug, excerpt: live.excerpt, blocks: live.blocks, fields: live.fields });

/** Key-order-independent JSON of a value (dates as ISO strings): two entries' content compare equal when their canonical forms do. */
export function canonical(value: unknown): string {
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const keys = Object.keys(value)
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}
