import type { Feature } from '../core/feature.ts';
import { revokeUserGrants } from './grants.ts';
import { oauthIndexes } from './model.ts';

/** OAuth has no registry operations (its endpoints are protocol routes in services/http/oauth.ts). */
export const oauthFeature: Feature = {
  name: 'oauth',
  operations: [],
  indexes: oauthIndexes,
  /** A new password ends every grant of the account: its access and refresh tokens stop on their next use. */
  async userPasswordChanged(ctx, userId, now) {
    await revokeUserGrants(ctx.db, ctx.site._id, userId, now);
  },
};
