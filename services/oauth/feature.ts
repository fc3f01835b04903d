import type { Feature } from '../core/feature.ts';
import { revokeUserGrants } from './grants.ts';
import { OAUTH_COLLECTIONS, oauthIndexes } from './model.ts';

/** OAuth has no registry operations (its endpoints are protocol routes in services/http/oauth.ts). */
export const oauthFeature: Feature = {
  name: 'oauth',
  operations: [],
  indexes: oauthIndexes,
  /** A new password ends every grant of the account: its access and refresh tokens stop on their next use. */
  async userPasswordChanged(ctx, userId, now) {
    await revokeUserGrants(ctx.db, ctx.site._id, userId, now);
  },
  // A clone opens to nothing the source issued: its clients, grants and tokens stay behind (docs/backups.md, "Clone").
  clone: { leftBehind: [OAUTH_COLLECTIONS.clients, OAUTH_COLLECTIONS.grants, OAUTH_COLLECTIONS.secrets] },
};
