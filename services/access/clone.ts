import type { CloneHooks } from '../core/feature.ts';
import { createContext } from '../core/context.ts';
import { systemPrincipal } from '../core/principal.ts';
import { ACCESS_COLLECTIONS, accessCollections } from './model.ts';
import { provisionAdministrator } from './provision.ts';
import { normalizeEmail } from './users.ts';

/** A password hash no password matches (`verifyPassword` knows only `scrypt$…`): a copied account signs in after a reset. */
export const CLONED_PASSWORD = 'cloned$no-password';

/**
 * A clone (docs/backups.md, "Clone") takes the accounts (authorship stays true) without their
 * secrets, and nothing the source issued: sessions, API keys, invitation and reset links, and the
 * rate counters start over. The request's administrator becomes the first site's.
 */
export const accessClone: CloneHooks = {
  leftBehind: [
    ACCESS_COLLECTIONS.sessions,
    ACCESS_COLLECTIONS.apiKeys,
    ACCESS_COLLECTIONS.invitations,
    ACCESS_COLLECTIONS.passwordResets,
    ACCESS_COLLECTIONS.counters,
  ],
  rewrite(_services, collection) {
    if (collection !== ACCESS_COLLECTIONS.users) return null;
    return ({ totp: _totp, ...doc }) => ({ ...doc, passwordHash: CLONED_PASSWORD, platformOperator: false });
  },
  /** A copied account with the administrator's e-mail takes the request's password and role; none: a new account. */
  async afterClone(services, workspace, clone) {
    const site = clone.sites[0];
    const { email, name, passwordHash } = clone.admin;
    await accessCollections(services.workspaceDb(workspace)).users.updateOne(
      { siteId: site._id, email: normalizeEmail(email) },
      { $set: { passwordHash, role: 'administrator', policy: {}, disabled: false, updatedAt: services.clock.now() } },
    );
    const ctx = createContext(services, { workspace, site }, systemPrincipal('workspace clone'), { id: `clone:${workspace._id}`, ip: '127.0.0.1' });
    await provisionAdministrator(ctx, { admin: { email, name, passwordHash } });
  },
};
