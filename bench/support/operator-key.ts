import { createContext } from '../../services/core/context.ts';
import { systemPrincipal } from '../../services/core/principal.ts';
import { loadUserAccess } from '../../services/access/user-access.ts';
import { findUserByEmail } from '../../services/access/users.ts';
import { createKey } from '../../services/access/keys.ts';
import { DEFAULT_KEY_SETTINGS, readSettingsDoc, writeKeySettings } from '../../services/access/site-settings-store.ts';
import { topics } from '../../services/core/topics.ts';
import type { startBenchWorld } from './world.ts';

/**
 * A key of the bootstrap administrator (a platform operator), with the Management API switched on and
 * no rate limit to speak of; or, given a site's host and its administrator's email, that one's key.
 */
export async function createApiKey(
  world: Awaited<ReturnType<typeof startBenchWorld>>,
  site: { host: string; email: string } = { host: 'localhost', email: world.admin.email },
): Promise<string> {
  const scope = await world.services.sites.resolve(site.host);
  if (!scope) throw new Error(`no site at ${site.host}`);
  const ctx = createContext(world.services, scope, systemPrincipal('bench setup'), { id: 'bench', ip: '127.0.0.1' });
  const owner = await findUserByEmail(ctx, site.email);
  const access = await loadUserAccess(ctx.db, ctx.site._id, owner!._id);
  const { key } = await createKey(
    ctx,
    { userId: owner!._id, capabilities: access!.capabilities },
    {
      name: 'bench operator',
      capabilities: [...access!.capabilities],
      expiresAt: null,
      rateLimitPerMin: 10_000_000,
    },
  );
  const doc = await readSettingsDoc(ctx.db, ctx.site._id);
  await writeKeySettings(
    ctx.db,
    ctx.site._id,
    { ...DEFAULT_KEY_SETTINGS, ...doc?.apiKeys, enabled: true, defaultRateLimitPerMin: 10_000_000 },
    world.services.clock.now(),
  );
  // The gateway holds the site's access settings: tell it they changed.
  await world.services.changeFeed.publish(topics.siteAccess(ctx.site._id));
  return key;
}
