import type { Document } from 'mongodb';
import type { Services } from '../../core/context.ts';
import type { Feature } from '../../core/feature.ts';
import type { Rewrite } from './load.ts';
import { SITE_CONFIG_COLLECTION } from '../../core/site-config.ts';

// What a clone changes of the data it copies (docs/backups.md, "Clone"): the site ids here, the
// rest by each feature for its own collections (`Feature.clone`): a clone never accepts a secret of
// its source, and nothing of it points back at the source's sites.

/** The collections no feature lets a clone copy (`Feature.clone.leftBehind`). */
export function cloneLeftBehind(features: readonly Feature[]): ReadonlySet<string> {
  return new Set(features.flatMap((feature) => feature.clone?.leftBehind ?? []));
}

/**
 * Every occurrence of a source site id in a string becomes the new site's: the id itself and the
 * compound ids built from it (`<siteId>:<key>`, `site:<siteId>`, export files, design documents,
 * plugin state); object keys too. BSON values (ObjectId, Binary, Date, …) are left as they are.
 * Site ids are 26 characters, 80 of their bits random (core/ids.ts): no other value holds one by chance.
 */
export function remapSiteIds(value: unknown, sites: ReadonlyMap<string, string>): unknown {
  if (typeof value === 'string') return remapString(value, sites);
  if (Array.isArray(value)) return value.map((item) => remapSiteIds(item, sites));
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[remapString(key, sites)] = remapSiteIds(item, sites);
  return out;
}

function remapString(text: string, sites: ReadonlyMap<string, string>): string {
  let out = text;
  for (const [from, to] of sites) if (out.includes(from)) out = out.split(from).join(to);
  return out;
}

/**
 * The rewrite of one collection's documents into the clone: site ids remapped, then the owning
 * feature's rewrite, if any. A `site_config` document is its kind's (`_c`, core/site-config.ts):
 * left behind with its kind, rewritten as its kind.
 */
export function cloneRewrite(services: Services, collection: string, sites: ReadonlyMap<string, string>, now: Date): Rewrite {
  if (collection === SITE_CONFIG_COLLECTION) {
    const leftBehind = cloneLeftBehind(services.features);
    const byKind = new Map<string, Rewrite>();
    return (source) => {
      const kind = String(source._c);
      if (leftBehind.has(kind)) return null;
      let rewrite = byKind.get(kind);
      if (!rewrite) byKind.set(kind, (rewrite = cloneRewrite(services, kind, sites, now)));
      return rewrite(source);
    };
  }
  const own = services.features.map((feature) => feature.clone?.rewrite?.(services, collection, now)).filter((rewrite) => !!rewrite);
  return (source) => own.reduce<Document | null>((doc, rewrite) => (doc === null ? null : rewrite(doc)), remapSiteIds(source, sites) as Document);
}
