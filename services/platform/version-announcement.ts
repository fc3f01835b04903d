import type { Services } from '../core/context.ts';
import { createContext } from '../core/context.ts';
import { serviceVersion } from '../core/version.ts';
import { systemPrincipal } from '../core/principal.ts';
import { PLATFORM_COLLECTIONS } from '../core/tenants.ts';
import { platformCollections } from '../tenancy/platform-db.ts';

/**
 * `core.updated` (contract 6.1): the first gateway to start on a new version records it and tells
 * every active site's subscribers; the conditional update makes sure only one gateway does.
 */
export async function announceVersion(services: Services, version = serviceVersion): Promise<boolean> {
  const meta = services.platformDb.collection<{ _id: string; version?: string }>(PLATFORM_COLLECTIONS.meta);
  const before = await meta
    .findOneAndUpdate({ _id: 'version', version: { $ne: version } }, { $set: { version } }, { upsert: true, returnDocument: 'before' })
    .catch((error: { code?: number }) => {
      // Another gateway recorded this version between our read and write.
      if (error.code === 11000) return null;
      throw error;
    });
  if (!before?.version) return false;

  const { workspaces, sites } = platformCollections(services);
  for (const workspace of await workspaces.find({ status: 'active' }).toArray()) {
    for (const site of await sites.find({ workspaceId: workspace._id }).toArray()) {
      const ctx = createContext(services, { workspace, site }, systemPrincipal('version announcement'), { id: `version:${version}`, ip: '127.0.0.1' });
      await ctx.emit('core.updated', { from: before.version, to: version });
    }
  }
  return true;
}
