import type { Db } from 'mongodb';
import type { Services } from '../core/context.ts';
import { findSiteScope } from '../tenancy/platform-db.ts';
import { activePluginIds } from './state.ts';

/**
 * Which plugins each site has active, as this process knows it. Read from the workspace database
 * and trusted for `ACTIVE_TTL_MS`: an activation through this process is seen at once (it calls
 * `forget`), other processes see it within the TTL. One per process: `services.activePlugins`.
 */
const ACTIVE_TTL_MS = 2000;

export interface ActivePlugins {
  /** The ids of the plugins active on a site, from this process's short-lived copy. */
  of(siteId: string, db?: Db): Promise<Set<string>>;
  /** Drops this process's copy of a site's active plugins (after an activation or deactivation). */
  forget(siteId?: string): void;
  size(): number;
}

/** The site a filter call is about: `siteId` (OpenAPI, webhooks), or the operation context (`mcp.tools`). */
export function siteOfArgs(args: Record<string, unknown>): { siteId: string; db?: Db } | null {
  if (typeof args.siteId === 'string') return { siteId: args.siteId };
  const ctx = args.ctx as { site?: { _id?: unknown }; db?: Db } | undefined;
  if (ctx && typeof ctx.site?._id === 'string') return { siteId: ctx.site._id, db: ctx.db };
  return null;
}

async function lookupSiteDb(services: Services, siteId: string): Promise<Db | null> {
  const scope = await findSiteScope(services, siteId);
  return scope ? services.workspaceDb(scope.workspace) : null;
}

export function createActivePlugins(services: Services): ActivePlugins {
  const active = new Map<string, { ids: Promise<Set<string>>; expires: number }>();
  /** A site never changes workspace, so its database handle is kept. */
  const siteDbs = new Map<string, Promise<Db | null>>();
  return {
    async of(siteId, db) {
      const hit = active.get(siteId);
      if (hit && hit.expires > Date.now()) return hit.ids;
      const ids = (async () => {
        let siteDb = db;
        if (!siteDb) {
          let pending = siteDbs.get(siteId);
          if (!pending) {
            pending = lookupSiteDb(services, siteId);
            siteDbs.set(siteId, pending);
            // A site that does not exist (yet) is looked up again next time.
            void pending.then(
              (found) => found ?? siteDbs.delete(siteId),
              () => siteDbs.delete(siteId),
            );
          }
          siteDb = (await pending) ?? undefined;
        }
        return siteDb ? activePluginIds(siteDb, siteId) : new Set<string>();
      })();
      active.set(siteId, { ids, expires: Date.now() + ACTIVE_TTL_MS });
      ids.catch(() => active.delete(siteId));
      return ids;
    },
    forget(siteId) {
      if (siteId) active.delete(siteId);
      else active.clear();
    },
    size: () => active.size,
  };
}
