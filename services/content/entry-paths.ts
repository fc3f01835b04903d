import type { OperationContext } from '../core/context.ts';
import { permalinkPaths, type PathFacts } from '../core/permalinks.ts';
import type { PublicView } from '../public-read/runner.ts';
import { taxonomyCollections } from './taxonomies.ts';
import type { EntryDoc } from './model.ts';

/** The fields that place an entry (a read may fetch only these; the working `slug` only for a preview). */
export const PATH_FIELDS = { _id: 1, type: 1, locale: 1, live: 1, slug: 1, publishedAt: 1, terms: 1, authorId: 1 } as const;
type PathDoc = Pick<EntryDoc, '_id' | 'type' | 'locale'> & Partial<Pick<EntryDoc, 'live' | 'slug' | 'publishedAt' | 'terms' | 'authorId'>>;

/** What places an entry as the public sees it: its published slug, or the working one in a preview. */
export function pathFactsOf(doc: PathDoc, preview: boolean): PathFacts {
  return {
    id: doc._id,
    locale: doc.locale,
    type: doc.type,
    slug: (preview || !doc.live ? doc.slug : doc.live.slug) ?? '',
    publishedAt: doc.publishedAt?.toISOString() ?? null,
    terms: doc.terms ?? {},
    authorId: doc.authorId ?? null,
  };
}

/**
 * The site path (`/en/post/hello`) of each entry of one public answer, by the site's permalink rule
 * (core/permalinks.ts, the rule the static export and the redirects use), as the site's public
 * state holds it; a read of the entries' category slugs only when the structure names
 * `%category%`. Public answers are held by the public cache, which a permalink or term change
 * invalidates like any public write.
 */
export async function publicPlacer(ctx: OperationContext, docs: readonly EntryDoc[], { state, preview }: PublicView): Promise<(doc: EntryDoc) => string> {
  const rules = state.permalinks;
  const slugs = new Map<string, string>();
  if (rules.structure.includes('%category%')) {
    const ids = [...new Set(docs.flatMap((doc) => doc.terms?.category ?? []))];
    if (ids.length) {
      const rows = await taxonomyCollections(ctx)
        .terms.find({ siteId: ctx.site._id, taxonomy: 'category', _id: { $in: ids } }, { projection: { _id: 1, slug: 1 } })
        .toArray();
      for (const row of rows) slugs.set(row._id, row.slug);
    }
  }
  const pathOf = permalinkPaths(rules);
  return (doc) => pathOf(pathFactsOf(doc, preview), (id) => slugs.get(id));
}
