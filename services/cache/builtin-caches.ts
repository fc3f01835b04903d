import { storedGeneration } from '../core/public-generation.ts';
import type { Services } from '../core/context.ts';
import { siteResolverCache, type NamedCache } from './caches.ts';

/**
 * The public read cache (services/public-read/state.ts). Clearing bumps the site's content
 * generation, the counter every gateway checks, so every gateway drops its cached responses.
 * Its per-process size is not exported by the content feature (docs/plugins.md lists the line
 * that would add it), so only the generation is reported.
 */
const publicContentCache = (): NamedCache => ({
  name: 'public-content',
  description: 'Public Content API responses, per site and content generation (the page store).',
  reach: 'site',
  async stats(ctx) {
    return { entries: null, details: { generation: await storedGeneration(ctx.db, ctx.site._id) } };
  },
  clear: (ctx) => ctx.services.publicGeneration.bump(ctx.db, ctx.site._id),
});

/** Which plugins each site has active, per process (services/plugins/host.ts, 2 s each). */
const activePluginsCache = (services: Services): NamedCache => ({
  name: 'plugins-active',
  description: 'Active plugins per site, as seen by this process.',
  reach: 'process',
  stats: () => ({ entries: services.activePlugins.size() }),
  clear: () => services.activePlugins.forget(),
});

/** Held management reads of this process (services/manage-read/held-answers.ts), every workspace's. */
const manageReadsCache = (services: Services): NamedCache => ({
  name: 'manage-reads',
  description: 'Management API answers held per key and URL until a write to what they read, as held by this process.',
  reach: 'process',
  stats: () => ({ entries: services.manageAnswers.size() }),
  clear: () => services.manageAnswers.clear(),
});

export const builtinCaches = (services: Services): NamedCache[] => [
  publicContentCache(),
  activePluginsCache(services),
  siteResolverCache(services.sites),
  manageReadsCache(services),
];
