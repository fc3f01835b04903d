import type { OperationContext, Services } from '../core/context.ts';
import { storedGeneration } from '../core/public-generation.ts';
import type { PublicGeneration } from '../core/public-generation.ts';
import { loadLanguages, type LanguagesDoc } from '../languages/languages.ts';
import { readAccessState } from '../access/site-settings-store.ts';
import { topics } from '../core/topics.ts';
import { readPermalinks, type Permalinks } from '../core/permalinks.ts';
import type { ChangeFeed } from '../core/change-feed.ts';
import type { Operation } from '../core/operation.ts';

/**
 * What every public read needs first: is the API on, which cache generation, which languages, and
 * where the site's entries live (its permalink rule, a document of a public collection: a change of
 * it moves the generation and drops this copy like any public write).
 */
export interface PublicState {
  generation: number;
  publicEnabled: boolean;
  languages: Pick<LanguagesDoc, 'languages' | 'defaultCode'>;
  permalinks: Permalinks;
}

export interface PublicCacheOptions {
  /** Response cache on/off (the benchmark measures both). */
  enabled: boolean;
  /**
   * How long a gateway trusts its copy of the site's public state before reading it again.
   * Writes through this gateway refresh it at once; other gateways see a change within this time.
   */
  stateTtlMs: number;
  maxEntriesPerSite: number;
}

interface SiteCache {
  state: PublicState | null;
  loadedAt: number;
  /** Loaded while the change feed vouches for this process and no change arrived meanwhile. */
  pushed: boolean;
  loading: Promise<PublicState> | null;
  responses: Map<string, Promise<unknown>>;
  /** Answers ready to send as they are, by request URL, for `responsesGeneration` (the cache-hit lane). */
  answers: Map<string, HeldAnswer>;
  responsesGeneration: number;
}

/** A public answer ready to send again as it is: its JSON body and that body's ETag. */
export interface ReadyAnswer {
  body: string;
  etag: string;
}

/** What the cache-hit lane holds for a URL: the answer, its length in bytes, and the operation that made it (for the gate). */
export interface HeldAnswer {
  body: string;
  length: number;
  etag: string;
  operation: Operation;
}

/**
 * This process's public read cache (a `Services` member, `services.publicCache`): per site, the
 * public state, the response promises of the current generation and the ready answers.
 */
export interface PublicCache {
  options: PublicCacheOptions;
  sites: Map<string, SiteCache>;
  feed: ChangeFeed;
}

export function createPublicCache(feed: ChangeFeed, generation: PublicGeneration): PublicCache {
  const sites = new Map<string, SiteCache>();
  // A write through this process drops its copy at once (read-your-writes on this gateway).
  generation.onBump((siteId) => forgetSite(sites, siteId));
  // Pushed invalidation: content writes announce `site-content:<id>`, switches `site-access:<id>`.
  feed.subscribe((topic) => {
    if (topic === null) for (const cache of sites.values()) cache.pushed = false;
    const siteId = topic && /^site-(?:content|access):(.+)$/.exec(topic)?.[1];
    const cache = siteId ? sites.get(siteId) : undefined;
    if (cache) {
      cache.state = null;
      cache.pushed = false;
    }
  });
  return { options: { enabled: true, stateTtlMs: 250, maxEntriesPerSite: 2000 }, sites, feed };
}

const registry = (services: Services): PublicCache => services.publicCache;

export function configurePublicCache(services: Services, options: Partial<PublicCacheOptions>): void {
  const reg = registry(services);
  reg.options = { ...reg.options, ...options };
  reg.sites.clear();
}

function siteCache(ctx: OperationContext): SiteCache {
  const { sites } = registry(ctx.services);
  let cache = sites.get(ctx.site._id);
  if (!cache) {
    cache = { state: null, loadedAt: 0, pushed: false, loading: null, responses: new Map(), answers: new Map(), responsesGeneration: -1 };
    sites.set(ctx.site._id, cache);
  }
  return cache;
}

async function readState(ctx: OperationContext): Promise<PublicState> {
  const [generation, publicEnabled, languages, permalinks] = await Promise.all([
    storedGeneration(ctx.db, ctx.site._id),
    readAccessState(ctx.db, ctx.site._id).then((state) => state.publicEnabled),
    loadLanguages(ctx),
    readPermalinks(ctx.db, ctx.site._id),
  ]);
  return { generation, publicEnabled, languages: { languages: languages.languages, defaultCode: languages.defaultCode }, permalinks };
}

/** The site's public state, re-read at most every `stateTtlMs` (one shared read when many requests arrive at once). */
export async function publicState(ctx: OperationContext): Promise<PublicState> {
  const { options } = registry(ctx.services);
  const cache = siteCache(ctx);
  // A cached "switched off" is never trusted: re-reading costs nothing on a site that is off, and
  // switching the API back on must take effect on the next request (contract 1.3).
  // While the change feed vouches for this process, a copy loaded under it holds until a change is
  // pushed (no read at all); otherwise it is trusted for `stateTtlMs`.
  const feed = ctx.services.changeFeed;
  if (cache.state?.publicEnabled && ((cache.pushed && feed.trusted()) || Date.now() - cache.loadedAt < options.stateTtlMs)) return cache.state;
  const epoch = feed.epoch();
  const trusted = feed.trusted();
  cache.loading ??= readState(ctx)
    .then((state) => {
      cache.state = state;
      cache.loadedAt = Date.now();
      cache.pushed = trusted && feed.trusted() && !feed.changedSince(epoch, [topics.siteContent(ctx.site._id), topics.siteAccess(ctx.site._id)]);
      return state;
    })
    .finally(() => {
      cache.loading = null;
    });
  return cache.loading;
}

/** Drops this gateway's copy of a site's public state (e.g. after the site settings changed). */
export function forgetPublicState(services: Services, siteId: string): void {
  forgetSite(registry(services).sites, siteId);
}

function forgetSite(sites: Map<string, SiteCache>, siteId: string): void {
  const cache = sites.get(siteId);
  if (cache) {
    cache.state = null;
    cache.loadedAt = 0;
    cache.pushed = false;
  }
}

/**
 * Cached public response for this generation, or computes and stores it. The promise is stored,
 * so the requests that arrive together right after an invalidation share one database query.
 */
export async function cachedResponse<T>(ctx: OperationContext, state: PublicState, key: string, compute: () => Promise<T>): Promise<T> {
  const { options } = registry(ctx.services);
  if (!options.enabled) return compute();
  const cache = siteCache(ctx);
  if (cache.responsesGeneration !== state.generation) {
    // Only move forward: a request holding an older state must not wipe newer responses.
    if (state.generation < cache.responsesGeneration) return compute();
    cache.responses = new Map();
    cache.answers = new Map();
    cache.responsesGeneration = state.generation;
  }
  const hit = cache.responses.get(key);
  ctx.services.metrics.cacheLookups.inc({ cache: 'public-response', result: hit ? 'hit' : 'miss' });
  if (hit) return hit as Promise<T>;
  const responses = cache.responses;
  if (responses.size >= options.maxEntriesPerSite) responses.delete(responses.keys().next().value!);
  // Frozen: the same object is served to every request of this generation, and the REST adapter
  // serializes (and hashes) a frozen result only once.
  const pending = compute().then((value) => (value && typeof value === 'object' ? Object.freeze(value) : value));
  responses.set(key, pending);
  // A failed read is not cached: the next request tries again.
  pending.catch(() => responses.get(key) === pending && responses.delete(key));
  return pending;
}

/** This gateway's figures for one site's public cache (for `GET /cache/stats`). */
export function publicCacheFigures(services: Services, siteId: string): { responses: number; generation: number | null } {
  const cache = registry(services).sites.get(siteId);
  return { responses: cache?.responses.size ?? 0, generation: cache && cache.responsesGeneration >= 0 ? cache.responsesGeneration : null };
}

/**
 * The cache-hit lane (docs/content.md, "Public read cache"): the answer already sent for this exact
 * request URL, when the site's public state is held under the change feed (pushed, the feed
 * trusted, the API on) and the answer belongs to its generation. Synchronous and free of database
 * work; anything else is `undefined` and the request takes the full path.
 */
export function peekReadyAnswer(services: Services, siteId: string, url: string): HeldAnswer | undefined {
  const cache = registry(services).sites.get(siteId);
  const state = cache?.state;
  // Through a database outage too: nothing can change the answer then (core/change-feed.ts `servesThroughOutage`).
  if (!state?.publicEnabled || !cache!.pushed || cache!.responsesGeneration !== state.generation || !services.changeFeed.servesThroughOutage())
    return undefined;
  return cache!.answers.get(url);
}

/**
 * Taken before a public read runs the full path; `keep` then stores its answer for the URL only if
 * nothing changed meanwhile (the same state object, still pushed and trusted, same generation), so
 * an answer computed before an invalidation is never served after it.
 */
export function readyAnswerSlot(services: Services, siteId: string, url: string, operation: Operation): { keep(answer: ReadyAnswer): void } | null {
  const reg = registry(services);
  const cache = reg.sites.get(siteId);
  const state = cache?.state;
  if (!cache || !state || !reg.options.enabled) return null;
  return {
    keep(answer) {
      if (cache.state !== state || !cache.pushed || cache.responsesGeneration !== state.generation || !services.changeFeed.trusted()) return;
      if (cache.answers.size >= reg.options.maxEntriesPerSite) cache.answers.delete(cache.answers.keys().next().value!);
      cache.answers.set(url, { body: answer.body, length: Buffer.byteLength(answer.body), etag: answer.etag, operation });
    },
  };
}
