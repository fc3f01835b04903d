import type { Db } from 'mongodb';
import type { Services } from '../core/context.ts';
import { ACCESS_COLLECTIONS } from '../access/model.ts';
import { COLLECTIONS as CONTENT_COLLECTIONS } from '../content/model.ts';
import { EVENT_COLLECTIONS } from '../events/model.ts';
import { MEDIA_COLLECTIONS } from '../media/model.ts';
import type { Site, Workspace } from '../core/tenants.ts';
import { counterValue, DAY_MS, exportCounterId, MINUTE_MS, rpmCounterId, windowStart } from '../tenancy/quota-guard.ts';
import {
  allowedMediaTypes, LIMIT_NAMES, siteLimit, SWITCH_NAMES, switchOn, workspaceLimit, type LimitName, type Usage,
} from '../tenancy/quota-model.ts';
import { platformCollections } from '../tenancy/platform-db.ts';

/**
 * The figures behind `GET /tenants/{id}/usage` and `GET /sites/{id}/usage`: the same counts the
 * quota checks make (services/tenancy/quota-guard.ts), for one site or the whole workspace.
 * `requestsPerMinute` is only metered while a limit is set (it costs a write per request), so
 * its `used` is 0 otherwise.
 */
async function usedFigures(services: Services, workspace: Workspace, siteId: string | null, now: Date): Promise<Record<LimitName, number | null>> {
  const db: Db = services.workspaceDb(workspace);
  const bySite = (extra: Record<string, unknown> = {}) => (siteId ? { siteId, ...extra } : extra);
  const count = (collection: string, extra?: Record<string, unknown>) => db.collection(collection).countDocuments(bySite(extra));
  const mediaCounter = siteId ? `site:${siteId}` : 'workspace';
  const [sites, users, entries, media, apiKeys, webhookEndpoints, requestsPerMinute, exportRunsPerDay] = await Promise.all([
    platformCollections(services).sites.countDocuments({ workspaceId: workspace._id }),
    count(ACCESS_COLLECTIONS.users),
    count(CONTENT_COLLECTIONS.entries, { trashedAt: null }),
    db.collection<{ _id: string; bytes: number }>(MEDIA_COLLECTIONS.usage).findOne({ _id: mediaCounter }),
    count(ACCESS_COLLECTIONS.apiKeys, { status: 'active' }),
    count(EVENT_COLLECTIONS.endpoints),
    counterValue(db, rpmCounterId(windowStart(now, MINUTE_MS))),
    counterValue(db, exportCounterId(siteId, windowStart(now, DAY_MS))),
  ]);
  return { sites, users, entries, mediaBytes: media?.bytes ?? 0, mediaFileSize: null, apiKeys, webhookEndpoints, requestsPerMinute, exportRunsPerDay };
}

export async function workspaceUsage(services: Services, workspace: Workspace): Promise<Usage> {
  const used = await usedFigures(services, workspace, null, services.clock.now());
  const quotas = Object.fromEntries(LIMIT_NAMES.map((name) => [name, { used: used[name], limit: workspaceLimit(workspace.quotas, name) }]));
  return {
    scope: 'tenant',
    tenantId: workspace._id,
    siteId: null,
    quotas: quotas as Usage['quotas'],
    mediaTypes: allowedMediaTypes(workspace.quotas, undefined),
    switches: Object.fromEntries(SWITCH_NAMES.map((name) => [name, switchOn(workspace.quotas, undefined, name)])) as Usage['switches'],
  };
}

export async function siteUsage(services: Services, workspace: Workspace, site: Site): Promise<Usage> {
  const used = await usedFigures(services, workspace, site._id, services.clock.now());
  const quotas = Object.fromEntries(LIMIT_NAMES.map((name) => [name, { used: used[name], limit: siteLimit(workspace.quotas, site.quotas, name) }]));
  return {
    scope: 'site',
    tenantId: workspace._id,
    siteId: site._id,
    quotas: quotas as Usage['quotas'],
    mediaTypes: allowedMediaTypes(workspace.quotas, site.quotas),
    switches: Object.fromEntries(SWITCH_NAMES.map((name) => [name, switchOn(workspace.quotas, site.quotas, name)])) as Usage['switches'],
  };
}
