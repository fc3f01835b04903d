import type { Services } from '../core/context.ts';
import type { Site, Workspace } from '../core/tenants.ts';
import { counterValue, DAY_MS, exportCounterId, MINUTE_MS, rpmCounterId, windowStart } from '../tenancy/quota-guard.ts';
import { allowedMediaTypes, LIMIT_NAMES, siteLimit, SWITCH_NAMES, switchOn, workspaceLimit, type LimitName, type Usage } from '../tenancy/quota-model.ts';
import { platformCollections } from '../tenancy/platform-db.ts';
import { retentionFreed, workspaceRetentionRules } from './retention.ts';

/**
 * The figures behind `GET /tenants/{id}/usage` and `GET /sites/{id}/usage`: the same counts the
 * quota checks make (services/tenancy/quota-guard.ts), for one site or the whole workspace. Each
 * feature counts its own (`Feature.usage`: users and keys, entries, media bytes, webhook
 * endpoints); the platform counts sites and reads the quota counters. `requestsPerMinute` is only
 * metered while a limit is set (it costs a write per request), so its `used` is 0 otherwise.
 */
async function usedFigures(services: Services, workspace: Workspace, siteId: string | null, now: Date): Promise<Record<LimitName, number | null>> {
  const db = services.workspaceDb(workspace);
  const [sites, requestsPerMinute, exportRunsPerDay, ...fromFeatures] = await Promise.all([
    platformCollections(services).sites.countDocuments({ workspaceId: workspace._id }),
    counterValue(db, rpmCounterId(windowStart(now, MINUTE_MS))),
    counterValue(db, exportCounterId(siteId, windowStart(now, DAY_MS))),
    ...services.features.map(async (feature) => (await feature.usage?.(services, workspace, siteId)) ?? {}),
  ]);
  const figures: Record<string, number> = Object.assign({}, ...fromFeatures);
  const counted = (name: LimitName) => figures[name] ?? 0;
  return {
    sites,
    users: counted('users'),
    entries: counted('entries'),
    mediaBytes: counted('mediaBytes'),
    mediaFileSize: null,
    apiKeys: counted('apiKeys'),
    webhookEndpoints: counted('webhookEndpoints'),
    requestsPerMinute,
    exportRunsPerDay,
  };
}

/** The workspace's retention rules and what the pass freed (docs/platform.md, "Retention"): the same for each of its sites. */
async function retentionFigures(services: Services, workspace: Workspace): Promise<Usage['retention']> {
  const { freed, lastFreedAt } = await retentionFreed(services.workspaceDb(workspace));
  return {
    rules: workspaceRetentionRules(workspace),
    freed,
    lastFreedAt: lastFreedAt?.toISOString() ?? null,
  };
}

export async function workspaceUsage(services: Services, workspace: Workspace): Promise<Usage> {
  const [used, retention] = await Promise.all([usedFigures(services, workspace, null, services.clock.now()), retentionFigures(services, workspace)]);
  const quotas = Object.fromEntries(LIMIT_NAMES.map((name) => [name, { used: used[name], limit: workspaceLimit(workspace.quotas, name) }]));
  return {
    scope: 'tenant',
    tenantId: workspace._id,
    siteId: null,
    quotas: quotas as Usage['quotas'],
    mediaTypes: allowedMediaTypes(workspace.quotas, undefined),
    switches: Object.fromEntries(SWITCH_NAMES.map((name) => [name, switchOn(workspace.quotas, undefined, name)])) as Usage['switches'],
    retention,
  };
}

export async function siteUsage(services: Services, workspace: Workspace, site: Site): Promise<Usage> {
  const [used, retention] = await Promise.all([usedFigures(services, workspace, site._id, services.clock.now()), retentionFigures(services, workspace)]);
  const quotas = Object.fromEntries(LIMIT_NAMES.map((name) => [name, { used: used[name], limit: siteLimit(workspace.quotas, site.quotas, name) }]));
  return {
    scope: 'site',
    tenantId: workspace._id,
    siteId: site._id,
    quotas: quotas as Usage['quotas'],
    mediaTypes: allowedMediaTypes(workspace.quotas, site.quotas),
    switches: Object.fromEntries(SWITCH_NAMES.map((name) => [name, switchOn(workspace.quotas, site.quotas, name)])) as Usage['switches'],
    retention,
  };
}
