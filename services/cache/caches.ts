import type { OperationContext } from '../core/context.ts';

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

/** The named caches of this process (`services.caches`, built once in services/runtime.ts). */
export interface CacheRegistry {
  /** Registers (or replaces, e.g. a rebuilt app's resolver) a cache of this process. */
  register(cache: NamedCache): void;
  /** Every cache, by name. */
  list(): NamedCache[];
}

export function createCacheRegistry(initial: readonly NamedCache[]): CacheRegistry {
  const byName = new Map(initial.map((cache) => [cache.name, cache]));
  return {
    register: (cache) => void byName.set(cache.name, cache),
    list: () => [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : 1)),
  };
}

/** The site resolver's host cache (services/tenancy/site-resolver.ts), as a named cache. */
export function siteResolverCache(resolver: { forget(): void; size?: () => number }): NamedCache {
  return {
    name: 'site-resolver',
    description: 'Host → site lookups of this gateway (3 s each).',
    reach: 'process',
    stats: () => ({ entries: resolver.size ? resolver.size() : null }),
    clear: () => resolver.forget(),
  };
}
