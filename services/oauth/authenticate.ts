import type { Services } from '../core/context.ts';
import type { SiteScope } from '../tenancy/site-resolver.ts';
import type { Principal } from '../core/principal.ts';
import { loadUserAccess } from '../access/user-access.ts';
import { grantOfToken } from './grants.ts';
import { ACCESS_TOKEN_PREFIX, oauthKeyId } from './model.ts';

export const isOAuthAccessToken = (authorization: string | undefined) =>
  /^Bearer\s+/i.test(authorization ?? '') && authorization!.replace(/^Bearer\s+/i, '').startsWith(ACCESS_TOKEN_PREFIX);

/**
 * An OAuth access token as a principal, or null. The live re-check of API keys applies: the grant's
 * consented capabilities are intersected with the user's current ones on every request. The token
 * must be bound to one of `resources` (RFC 8707), so a token for the MCP endpoint is not a
 * Management API credential unless it was issued for the Management API.
 */
export async function authenticateOAuthToken(
  services: Services,
  scope: SiteScope,
  authorization: string | undefined,
  resources: readonly string[],
): Promise<Principal | null> {
  if (!isOAuthAccessToken(authorization)) return null;
  const db = services.workspaceDb(scope.workspace);
  const siteId = scope.site._id;
  const grant = await grantOfToken(db, siteId, authorization!.replace(/^Bearer\s+/i, ''), services.clock.now());
  if (!grant || !resources.includes(grant.resource)) return null;
  const access = await loadUserAccess(db, siteId, grant.userId);
  if (!access) return null;
  return {
    kind: 'key',
    // Rate limits, audit rows and webhook ownership key on this id like on an API key's.
    keyId: oauthKeyId(grant._id),
    userId: grant.userId,
    capabilities: new Set(grant.scope.filter((capability) => access.capabilities.has(capability))),
    scope: {},
    isPlatformOperator: access.user.platformOperator,
  };
}
