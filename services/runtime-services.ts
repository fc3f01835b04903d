import type { Config } from './core/config.ts';
import type { EventPublisher, Services } from './core/context.ts';
import type { Feature } from './core/feature.ts';
import { workspaceIndexSpecs } from './tenancy/index-version.ts';
import { createServices, type CoreServiceOptions } from './core/services.ts';
import { createSiteResolver } from './tenancy/site-resolver.ts';
import { createPluginRegistry } from './plugins/registry.ts';
import { createActivePlugins } from './plugins/active-sites.ts';
import { installPluginHost } from './plugins/host.ts';
import { createPublicCache } from './public-read/state.ts';
import { createManageAnswers } from './manage-read/held-answers.ts';
import './members.ts';
import { features } from './features.ts';
import { createWebhookPublisher } from './events/publisher.ts';
import { createWebhookSettings, type WebhookOptions } from './events/settings.ts';
import { DEFAULT_EXPORT_TUNING } from './export/model.ts';
import { createCacheRegistry } from './cache/caches.ts';
import { builtinCaches } from './cache/builtin-caches.ts';
import { createRateCounters } from './access/rate-limit.ts';
import { createAuditTrail, type AuditTrailOptions } from './audit/trail.ts';
import { createMailer } from './mail/transport.ts';
import { createSearchSync } from './content/search-sync.ts';
import { createRecentEntries } from './content/recent-entries.ts';
import { createFeedCache } from './core/feed-cache.ts';

export interface RuntimeOptions extends CoreServiceOptions {
  /** The feature list; `services/features.ts` unless a test adds probes. */
  features?: readonly Feature[];
  events?: (services: Services) => EventPublisher;
  /** Webhook timings (tests shorten the backoff); the SSRF switch comes from the configuration. */
  webhooks?: WebhookOptions;
  /** How audit rows are written (tests make the store refuse writes). */
  audit?: AuditTrailOptions;
}

/**
 * Builds every member of `Services` once: the ground floor (core/services.ts), then the members
 * the features declare in `services/members.ts`; then the plugins' hooks. Nothing of HTTP: the
 * worker starts from here (services/worker.ts), the gateway and the tests from `runtime.ts`.
 */
export async function createRuntimeServices(config: Config, options: RuntimeOptions = {}): Promise<Services> {
  const featureList = options.features ?? features;
  // Only the collections held management reads depend on are watched: other writes announce nothing.
  const watchedCollections = new Set(featureList.flatMap((feature) => feature.operations.flatMap((operation) => operation.heldAnswer?.reads ?? [])));
  const publicCollections = featureList.flatMap((feature) => feature.publicCollections ?? []);
  const core = await createServices(config, { ...options, watchedCollections, publicCollections, workspaceIndexes: workspaceIndexSpecs(featureList) });
  const services = core as Services;
  services.features = featureList;
  services.sites = createSiteResolver(services);
  services.publicCache = createPublicCache(services.changeFeed, services.publicGeneration);
  services.manageAnswers = createManageAnswers(services.changeFeed, services.writes);
  services.plugins = createPluginRegistry();
  services.activePlugins = createActivePlugins(services);
  services.exportTuning = { ...DEFAULT_EXPORT_TUNING };
  services.caches = createCacheRegistry(builtinCaches(services));
  services.rateCounters = createRateCounters();
  services.audit = createAuditTrail(services.log, options.audit);
  services.mailer = createMailer(config, services.log);
  services.searchSync = createSearchSync(services.publicGeneration);
  services.recentEntries = createRecentEntries();
  services.languages = createFeedCache(services.changeFeed, 10_000);
  services.webhooks = createWebhookSettings(config, options.webhooks);
  services.events = (options.events ?? createWebhookPublisher)(services);
  installPluginHost(services);
  return services;
}
