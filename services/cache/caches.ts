import type { OperationContext, Services } from '../core/context.ts';

/** Figures one cache reports for `GET /cache/stats`; `entries` is null when the owner does not expose it. */
export interface CacheFigures {
  entries: number | null;
  details?: Record<string, number | string | boolean | null>;
}

/**
 * A named cache other modules register so `/cache/stats` and `/cache/clear` can reach it without
 * knowing its insides. `reach` says what a clear affects: `site` caches are invalidated for every
 * gateway (through a shared counter), `process` caches only in the process that answers the call
 * (the others expire on their own short TTL).
 */
export interface NamedCache {
  name: string;
  description: string;
  reach: 'site' | 'process';
  stats(ctx: OperationContext): CacheFigures | Promise<CacheFigures>;
  clear(ctx: OperationContext): void | Promise<void>;
}

const registries = new WeakMap<Services, Map<string, NamedCache>>();
const defaults: Array<(services: Services) => NamedCache> = [];

function registry(services: Services): Map<string, NamedCache> {
  let found = registries.get(services);
  if (!found) {
    found = new Map();
    registries.set(services, found);
    for (const make of defaults) {
      const cache = make(services);
      found.set(cache.name, cache);
    }
  }
  return found;
}

/** Caches every process has (registered by this folder's `builtin-caches.ts`). */
export function registerDefaultCache(make: (services: Services) => NamedCache): void {
  defaults.push(make);
}

/** Registers (or replaces, e.g. a rebuilt app's resolver) a cache of this process. */
export function registerCache(services: Services, cache: NamedCache): void {
  registry(services).set(cache.name, cache);
}

export function listCaches(services: Services): NamedCache[] {
  return [...registry(services).values()].sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** The site resolver's host cache (services/platform/tenancy.ts), as a named cache. */
export function siteResolverCache(resolver: { forget(): void; size?: () => number }): NamedCache {
  return {
    name: 'site-resolver',
    description: 'Host → site lookups of this gateway (3 s each).',
    reach: 'process',
    stats: () => ({ entries: resolver.size ? resolver.size() : null }),
    clear: () => resolver.forget(),
  };
}
