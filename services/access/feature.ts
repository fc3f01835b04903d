import type { Feature } from '../core/feature.ts';
import { siteCount } from '../core/site-count.ts';
import { ACCESS_COLLECTIONS } from './model.ts';
import { authOperations } from './auth-ops.ts';
import { keyOperations } from './key-ops.ts';
import { keySettingsOperations } from './key-settings-ops.ts';
import { provisionAdministrator } from './provision.ts';
import { userOperations } from './user-ops.ts';
import { roleOperations } from './role-ops.ts';
import { twoFactorOperations } from './two-factor.ts';
import { sessionOperations } from './session-ops.ts';
import { invitationOperations } from './invitations.ts';
import { passwordOperations } from './password-ops.ts';
import { purgeOldWindows } from './rate-limit.ts';
import { accessClone } from './clone.ts';

export const accessFeature: Feature = {
  name: 'access',
  operations: [
    ...authOperations,
    ...twoFactorOperations,
    ...passwordOperations,
    ...sessionOperations,
    ...keySettingsOperations,
    ...keyOperations,
    ...invitationOperations,
    ...userOperations,
    ...roleOperations,
  ],
  indexes: [
    { collection: ACCESS_COLLECTIONS.users, keys: { siteId: 1, email: 1 }, options: { unique: true } },
    { collection: ACCESS_COLLECTIONS.sessions, keys: { siteId: 1, userId: 1 } },
    // Roles (unique by name), API keys (unique by lookup: a key's sign-in reads it so) and invitations are `site_config` kinds (core/site-config.ts).
    { collection: ACCESS_COLLECTIONS.passwordResets, keys: { siteId: 1, userId: 1 } },
    { collection: ACCESS_COLLECTIONS.audit, keys: { siteId: 1, action: 1, _id: 1 } },
    { collection: ACCESS_COLLECTIONS.audit, keys: { siteId: 1, agg: 1 } },
    // MongoDB drops expired counters and failure rows by itself; the worker's purge does where TTL does not run.
    { collection: ACCESS_COLLECTIONS.counters, keys: { expiresAt: 1 }, options: { expireAfterSeconds: 0 } },
    { collection: ACCESS_COLLECTIONS.audit, keys: { expiresAt: 1 }, options: { expireAfterSeconds: 0 } },
  ],
  provisionSite: provisionAdministrator,
  clone: accessClone,
  // Rate counters past their window (TTL on MongoDB; a site that only ever receives refused
  // requests never runs the gate's own purge): housekeeping, not history, so not counted as freed.
  async retention(ctx, run) {
    await purgeOldWindows(ctx.db, run.now);
    return { removed: {} };
  },
  async usage(services, workspace, siteId) {
    // Exact figures for the operator's usage pages (platform:manage, not a content path): counted
    // from the { siteId } indexes, bounded by the users and keys a workspace has, not by its content.
    const db = services.workspaceDb(workspace);
    const site = siteId ? { siteId } : {};
    const [users, apiKeys] = await Promise.all([
      siteCount(db.collection(ACCESS_COLLECTIONS.users), siteId),
      db.collection(ACCESS_COLLECTIONS.apiKeys).countDocuments({ ...site, status: 'active' }),
    ]);
    return { users, apiKeys };
  },
};
