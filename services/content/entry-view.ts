import { z } from 'zod';
import { EntryStatusSchema, type EntryDoc } from './model.ts';

const BlocksView = z.object({ version: z.literal(1), blocks: z.array(z.unknown()) });

/** A content entry as the Management API shows it (contract 2.1, plus author, terms, header and schedule). */
export const EntryView = z.object({
  id: z.string(),
  type: z.string(),
  title: z.string(),
  slug: z.string(),
  locale: z.string(),
  status: EntryStatusSchema,
  excerpt: z.string().nullable(),
  blocks: BlocksView,
  fields: z.record(z.string(), z.unknown()),
  publishedAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  version: z.number().int(),
  author: z.string().nullable(),
  terms: z.record(z.string(), z.array(z.string())),
  headerRef: z.object({ mode: z.enum(['library', 'default', 'none']), name: z.string().optional() }),
  publishOn: z.string().nullable(),
  unpublishOn: z.string().nullable(),
});
export type EntryView = z.infer<typeof EntryView>;

/** List items carry a subset (contract 2.1). */
export const EntryListItem = EntryView.pick({
  id: true,
  type: true,
  title: true,
  slug: true,
  status: true,
  version: true,
  locale: true,
  updatedAt: true,
  publishedAt: true,
});

const iso = (date: Date | null | undefined) => (date ? date.toISOString() : null);

export function toEntryView(doc: EntryDoc): EntryView {
  return {
    id: doc._id,
    type: doc.type,
    title: doc.title,
    slug: doc.slug,
    locale: doc.locale,
    status: doc.status,
    excerpt: doc.excerpt,
    blocks: doc.blocks,
    fields: doc.fields,
    publishedAt: iso(doc.publishedAt),
    createdAt: doc.createdAt.toISOString(),
    updatedAt: doc.updatedAt.toISOString(),
    version: doc.version,
    author: doc.authorId,
    terms: doc.terms ?? {},
    headerRef: doc.headerRef ?? { mode: 'default' },
    publishOn: iso(doc.schedule?.publishOn),
    unpublishOn: iso(doc.schedule?.unpublishOn),
  };
}

/** The fields `toListItem` reads: a list fetches only these (bodies and revisions stay in the database). */
export const LIST_ITEM_FIELDS = { _id: 1, type: 1, title: 1, slug: 1, status: 1, version: 1, locale: 1, updatedAt: 1, publishedAt: 1 } as const;

export function toListItem(doc: Pick<EntryDoc, keyof typeof LIST_ITEM_FIELDS>) {
  return {
    id: doc._id,
    type: doc.type,
    title: doc.title,
    slug: doc.slug,
    status: doc.status,
    version: doc.version,
    locale: doc.locale,
    updatedAt: doc.updatedAt.toISOString(),
    publishedAt: iso(doc.publishedAt),
  };
}

/** Public view: the published snapshot, or the working revision when an editor previews. */
export const PublicEntryView = EntryView.pick({
  id: true,
  type: true,
  title: true,
  slug: true,
  locale: true,
  status: true,
  excerpt: true,
  blocks: true,
  fields: true,
  terms: true,
  publishedAt: true,
  updatedAt: true,
}).extend({
  /** Where the entry lives on the public site, by the site's permalink rule (`/en/post/hello`; docs/site-config.md "Permalinks"). */
  path: z.string(),
  preview: z.boolean().optional(),
});
export type PublicEntryView = z.infer<typeof PublicEntryView>;

/** `path`: the entry's site path by the permalink rule (content/entry-paths.ts `publicPlacer`, the export's `entryPath`). */
export function toPublicEntry(doc: EntryDoc, preview: boolean, path: string): PublicEntryView {
  const source = preview || !doc.live ? doc : doc.live;
  return {
    id: doc._id,
    type: doc.type,
    title: source.title,
    slug: source.slug,
    locale: doc.locale,
    status: doc.status,
    excerpt: source.excerpt,
    blocks: source.blocks,
    fields: source.fields,
    terms: doc.terms ?? {},
    publishedAt: iso(doc.publishedAt),
    updatedAt: doc.updatedAt.toISOString(),
    path,
    ...(preview ? { preview: true } : {}),
  };
}
