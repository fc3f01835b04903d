import { z } from 'zod';
import type { Collection, Db } from 'mongodb';
import { refuseUnsafeLinks } from '../core/safe-url.ts';

export const ENTRY_STATUSES = ['draft', 'published', 'archived', 'scheduled'] as const;
export const EntryStatusSchema = z.enum(ENTRY_STATUSES);
export type EntryStatus = z.infer<typeof EntryStatusSchema>;

/** Block document (contract 9.3): the format carries its own constant version. */
export const BlockDocumentSchema = z.object({
  version: z.literal(1),
  blocks: z.array(z.unknown()),
});
export type BlockDocument = z.infer<typeof BlockDocumentSchema>;
/**
 * A block document as an input accepts it: every `url`/`src`/`href` in it, however deep, must pass
 * the link rule (core/safe-url.ts), or the write is a 400 naming where the link is. Answers keep
 * `BlockDocumentSchema`: data stored before the rule is neutralised where it is rendered.
 */
export const BlockDocumentInput = BlockDocumentSchema.superRefine(refuseUnsafeLinks);
export const emptyBlocks = (): BlockDocument => ({ version: 1, blocks: [] });

/** What the public sees: copied from the working fields at publish time. */
export interface LiveSnapshot {
  title: string;
  titleLower: string;
  slug: string;
  excerpt: string | null;
  blocks: BlockDocument;
  fields: Record<string, unknown>;
}

export type HeaderRef = { mode: 'library'; name: string } | { mode: 'default' } | { mode: 'none' };

/**
 * One entry. The top-level content fields are the working revision (what editors change); `live`
 * is the published snapshot the Public API serves. `version` increments on every write.
 */
export interface EntryDoc {
  _id: string;
  siteId: string;
  type: string;
  title: string;
  /** Lower-cased title: case-insensitive search without `$text` or per-query collation. */
  titleLower: string;
  slug: string;
  locale: string;
  status: EntryStatus;
  excerpt: string | null;
  blocks: BlockDocument;
  fields: Record<string, unknown>;
  live: LiveSnapshot | null;
  publishedAt: Date | null;
  authorId: string | null;
  terms: Record<string, string[]>;
  headerRef: HeaderRef;
  schedule: { publishOn: Date | null; unpublishOn: Date | null; token: string } | null;
  createdAt: Date;
  updatedAt: Date;
  version: number;
  trashedAt: Date | null;
  /**
   * Who wrote this state (a user id; null for the system, or a key without a user) and why the
   * system wrote it, if it did: the revision this state becomes once the entry moves on. An entry's
   * current state is its own newest revision; the others are rows of `content_revisions`
   * (`revisionOf`, entries.ts). Absent on entries written before these fields (their current state
   * has a row of its own).
   */
  changedBy?: string | null;
  changeNote?: string | null;
  /**
   * Effects still owed for `version` by a durable write (a job's or the schedule's, write-path.ts):
   * set in the same write as the change, removed once the postings and events are done, so a
   * worker killed in between leaves them to the retry instead of losing them.
   */
  pending?: { version: number; events: string[]; note: string | null } | null;
}

/**
 * What every entry starts with besides its content: version 1, no schedule, not trashed, the site's
 * default header, created and changed `now`. The create operation, the import and the tests' and
 * benchmarks' seeds build on it.
 */
export function newEntryState(now: Date): Pick<EntryDoc, 'headerRef' | 'schedule' | 'createdAt' | 'updatedAt' | 'version' | 'trashedAt'> {
  return { headerRef: { mode: 'default' }, schedule: null, createdAt: now, updatedAt: now, version: 1, trashedAt: null };
}

export interface RevisionDoc {
  /** `<entryId>:<version>`: writing the same revision twice (a retried step) is a no-op. */
  _id: string;
  siteId: string;
  entryId: string;
  version: number;
  title: string;
  slug: string;
  status: EntryStatus;
  excerpt: string | null;
  blocks: BlockDocument;
  fields: Record<string, unknown>;
  authorId: string | null;
  createdAt: Date;
  /** Why the system wrote this state, e.g. a publish date that passed while the workspace was suspended. */
  note?: string | null;
}

export interface ContentTypeDoc {
  _id: string;
  siteId: string;
  slug: string;
  label: string;
  description: string;
  fields: FieldDefinition[];
  createdAt: Date;
  updatedAt: Date;
}

export const FIELD_KINDS = ['string', 'text', 'number', 'integer', 'boolean', 'date', 'url', 'select', 'list', 'object'] as const;

export const FieldDefinitionSchema = z.object({
  name: z.string().regex(/^[a-zA-Z][a-zA-Z0-9_]{0,63}$/, 'letters, digits and _ only, starting with a letter'),
  label: z.string().max(200).optional(),
  kind: z.enum(FIELD_KINDS),
  required: z.boolean().default(false),
  /** `select`: the allowed values. */
  options: z.array(z.string().min(1)).min(1).optional(),
  /** `string`/`text`: maximum length. */
  maxLength: z.number().int().positive().optional(),
  min: z.number().optional(),
  max: z.number().optional(),
});
export type FieldDefinition = z.infer<typeof FieldDefinitionSchema>;

export const COLLECTIONS = {
  entries: 'content_entries',
  revisions: 'content_revisions',
  types: 'content_types',
  taxonomies: 'taxonomies',
  terms: 'taxonomy_terms',
  /** The term-removal jobs started and not finished (`term-removal-job.ts`): what a workspace deletion stops. */
  jobs: 'term_removal_jobs',
} as const;

export function contentCollections(db: Db) {
  return {
    entries: db.collection<EntryDoc>(COLLECTIONS.entries),
    revisions: db.collection<RevisionDoc>(COLLECTIONS.revisions),
    types: db.collection<ContentTypeDoc>(COLLECTIONS.types),
  };
}

export type EntriesCollection = Collection<EntryDoc>;

/** Scope fields of an entry, declared by the operations on entries (`scope: ENTRY_SCOPE`, core/scope.ts). */
export const ENTRY_SCOPE = { type: 'type', locale: 'locale', owner: 'authorId' } as const;
