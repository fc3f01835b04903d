import type { Config } from './core/config.ts';
import type { EventPublisher, Services } from './core/context.ts';
import type { Feature } from './core/feature.ts';
import { workspaceIndexSpecs } from './tenancy/index-version.ts';
import { createServices, type CoreServiceOptions } from './core/services.ts';
import { createSiteResolver } from './tenancy/site-resolver.ts';
import { createPluginRegistry } from './plugins/registry.ts';
import { createActivePlugins } from './plugins/active-sites.ts';
import { createPublicCache } from './public-read/state.ts';
import { createManageAnswers } from './manage-read/held-answers.ts';
import './members.ts';
import { features } from './features.ts';
import { createWebhookPublisher } from './events/publisher.ts';
import { createWebhookSettings, type WebhookOptions } from './events/settings.ts';
import { createAccessGate, type AccessGate } from './access/gate.ts';
import { authenticateOAuthToken, isOAuthAccessToken } from './oauth/authenticate.ts';
import { buildApp } from './http/app.ts';
import { mediaFilesExtension } from './http/media-files.ts';
import { mcpExtension } from './http/mcp.ts';
import { oauthExtension } from './http/oauth.ts';
import { adminUiExtension } from './http/admin-ui.ts';
import { graphqlExtension } from './http/graphql.ts';
import { exportPreviewExtension } from './http/export-preview.ts';
import { engineReadiness, probesExtension } from './http/probes.ts';
import { installPluginHost } from './plugins/host.ts';
import { DEFAULT_EXPORT_TUNING } from './export/model.ts';
import { createCacheRegistry } from './cache/caches.ts';
import { builtinCaches } from './cache/builtin-caches.ts';
import { createRateCounters } from './access/rate-limit.ts';
import { createAuditTrail, type AuditTrailOptions } from './audit/trail.ts';
import { createMailer } from './mail/transport.ts';

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
 * the features declare in `services/members.ts`.
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
  services.webhooks = createWebhookSettings(config, options.webhooks);
  services.events = (options.events ?? createWebhookPublisher)(services);
  return services;
}

/**
 * Wires the features into one process: services, the access gate and the HTTP app. The gateway,
 * the worker and the tests all start from here, so they run the same wiring.
 */
export async function createRuntime(config: Config, options: RuntimeOptions = {}) {
  const services = await createRuntimeServices(config, options);
  installPluginHost(services);
  const gate: AccessGate = createAccessGate(services, { isToken: isOAuthAccessToken, authenticate: authenticateOAuthToken });
  return {
    services,
    gate,
    buildApp: (appOptions: { logger?: boolean } = {}) =>
      buildApp({
        services,
        gate,
        extensions: [
          mediaFilesExtension,
          mcpExtension,
          oauthExtension,
          adminUiExtension,
          graphqlExtension,
          exportPreviewExtension,
          probesExtension(engineReadiness),
        ],
        ...appOptions,
      }),
  };
}
