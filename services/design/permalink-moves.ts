import type { OperationContext } from '../core/context.ts';
import { newId } from '../core/ids.ts';
import { COLLECTIONS, type EntryDoc } from '../content/model.ts';
import type { TermDoc } from '../content/taxonomies.ts';
import { redirectsCollection } from '../redirects/redirects.ts';
import { permalinkPaths, permalinksKey, termArchivePath, type Permalinks } from '../core/permalinks.ts';

/**
 * A permalink change moves every published entry (and, with `categoryBase` or `tagBase`, every
 * category or tag archive a published entry's locale shows): each old path becomes a 301 redirect rule to the
 * new one, in the site's redirects (so the Public API's `GET /redirects?path=`, the static export's
 * `_redirects` file and its redirect pages all answer old links). Rules that pointed at an old path
 * follow the entry (no chains); a rule left pointing at itself (the structure changed back) goes.
 * A rule someone already keeps for an old path is left as it is.
 */
export async function redirectMovedEntries(ctx: OperationContext, before: Permalinks, after: Permalinks): Promise<number> {
  if (permalinksKey(before) === permalinksKey(after)) return 0;
  const siteId = ctx.site._id;
  const [entries, termRows] = await Promise.all([
    ctx.db
      .collection<EntryDoc>(COLLECTIONS.entries)
      .find({ siteId, status: 'published', trashedAt: null }, { projection: { _id: 1, type: 1, locale: 1, live: 1, publishedAt: 1, terms: 1, authorId: 1 } })
      .toArray(),
    ctx.db
      .collection<TermDoc>(COLLECTIONS.terms)
      .find({ siteId, taxonomy: { $in: ['category', 'tag'] } }, { projection: { _id: 1, slug: 1, taxonomy: 1 } })
      .toArray(),
  ]);
  const slugs = new Map(termRows.filter((t) => t.taxonomy === 'category').map((t) => [t._id, t.slug]));
  const termSlug = (id: string) => slugs.get(id);
  const terms = new Map(termRows.map((t) => [t._id, t]));
  const moves = new Map<string, string>();
  const [pathBefore, pathAfter] = [permalinkPaths(before), permalinkPaths(after)];
  const moveTerms = (locale: string, assigned: Record<string, string[]>) => {
    for (const taxonomy of ['category', 'tag']) {
      for (const id of assigned[taxonomy] ?? []) {
        const term = terms.get(id);
        if (!term) continue;
        const facts = { locale, taxonomy, slug: term.slug };
        const [from, to] = [termArchivePath(before, facts), termArchivePath(after, facts)];
        if (from !== to) moves.set(from, to);
      }
    }
  };
  for (const doc of entries) {
    if (!doc.live) continue;
    const facts = {
      id: doc._id,
      locale: doc.locale,
      type: doc.type,
      slug: doc.live.slug,
      publishedAt: doc.publishedAt?.toISOString() ?? null,
      terms: doc.terms ?? {},
      authorId: doc.authorId,
    };
    const from = pathBefore(facts, termSlug);
    const to = pathAfter(facts, termSlug);
    if (from !== to) moves.set(from, to);
    moveTerms(doc.locale, doc.terms ?? {});
  }
  if (moves.size === 0) return 0;
  const rules = redirectsCollection(ctx);
  const now = ctx.services.clock.now();
  const ops = [...moves].flatMap(([from, to]) => [
    { updateMany: { filter: { siteId, to: from }, update: { $set: { to, updatedAt: now } } } },
    {
      updateOne: {
        filter: { siteId, from },
        update: { $setOnInsert: { _id: newId(), siteId, from, to, status: 301 as const, enabled: true, createdAt: now, updatedAt: now } },
        upsert: true,
      },
    },
  ]);
  await rules.bulkWrite(ops, { ordered: true });
  const landed = await rules.find({ siteId, from: { $in: [...moves.values()] } }, { projection: { _id: 1, from: 1, to: 1 } }).toArray();
  const circles = landed.filter((rule) => rule.from === rule.to).map((rule) => rule._id);
  if (circles.length) await rules.deleteMany({ siteId, _id: { $in: circles } });
  return moves.size;
}
