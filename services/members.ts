import type { Feature } from './core/feature.ts';
import type { SiteResolver } from './tenancy/site-resolver.ts';
import type { PluginRegistry } from './plugins/registry.ts';
import type { ActivePlugins } from './plugins/active-sites.ts';
import type { ExportTuning } from './export/model.ts';
import type { WebhookSettings } from './events/settings.ts';
import type { CacheRegistry } from './cache/caches.ts';
import type { RateCounters } from './access/rate-limit.ts';
import type { PublicCache } from './public-read/state.ts';
import type { ManageAnswers } from './manage-read/held-answers.ts';
import type { AuditTrail } from './audit/trail.ts';
import type { Mailer } from './mail/transport.ts';
import type { SearchSync } from './content/search-sync.ts';
import type { RecentEntries } from './content/recent-entries.ts';
import type { FeedCache } from './core/feed-cache.ts';
import type { LanguagesDoc } from './languages/languages.ts';

/**
 * The members of `Services` whose types belong to a feature folder. core/ declares the ground floor
 * (`CoreServices` in core/context.ts) and imports nothing above it; this file adds the rest to the
 * same interface, so `ctx.services.<member>` is typed everywhere and every member is listed in one
 * of two places. Each member is built once, in `services/runtime-services.ts`: no module-level registries.
 *
 * To add process state: declare it here, build it in `createRuntimeServices`, read it as `services.<name>`.
 */
declare module './core/context.ts' {
  interface Services {
    /** Every feature folder (operations, indexes, provisioning), from `services/features.ts`. */
    features: readonly Feature[];
    /** Host → site and workspace, held per process while the change feed vouches for it (docs/access.md). */
    sites: SiteResolver;
    /** Installed plugin definitions (built-ins, plus test-only ones a test world registers). */
    plugins: PluginRegistry;
    /** Which plugins each site has active, cached briefly per process. */
    activePlugins: ActivePlugins;
    /** Static export batch size and pause, sent with each run's workflow start (tests shrink them to watch progress). */
    exportTuning: ExportTuning;
    /** Webhook retry, timeouts, SSRF guard, secret box and the actor wakes in flight (`events/settings.ts`). */
    webhooks: WebhookSettings;
    /** The named caches `/cache/stats` and `/cache/clear` reach (built-ins from `cache/builtin-caches.ts`). */
    caches: CacheRegistry;
    /** Per-minute window counters (rate limits, login throttle), batched per workspace database. */
    rateCounters: RateCounters;
    /** Public read cache: per site, its public state, responses and ready answers (`public-read/state.ts`). */
    publicCache: PublicCache;
    /** Held management reads: per site, answers by key and URL (`manage-read/held-answers.ts`). */
    manageAnswers: ManageAnswers;
    /** The audit writer: change rows queued after their change and written in groups (`audit/trail.ts`). */
    audit: AuditTrail;
    /** Outgoing mail: SMTP by SMTP_URL, else a local folder (`mail/transport.ts`). */
    mailer: Mailer;
    /** The write path's search postings, written in groups per site (`content/search-sync.ts`). */
    searchSync: SearchSync;
    /** The entries this process last wrote, so its next change of one skips the read (`content/recent-entries.ts`). */
    recentEntries: RecentEntries;
    /** Each site's languages document, held while the change feed vouches for it (`languages/languages.ts`). */
    languages: FeedCache<LanguagesDoc | null>;
  }
}

export {};
