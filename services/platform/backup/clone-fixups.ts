import type { Document } from 'mongodb';
import { ACCESS_COLLECTIONS } from '../../access/model.ts';
import { OAUTH_COLLECTIONS } from '../../oauth/model.ts';
import { EVENT_COLLECTIONS } from '../../events/model.ts';
import { createWebhookSecretBox, generateWebhookSecret, secretBinding } from '../../events/secrets.ts';
import type { Rewrite } from './load.ts';
import { SITE_STATE_COLLECTION, SITE_STATE_KINDS, siteStateKindRange } from '../../core/site-state.ts';

// What a clone changes of the data it copies (docs/backups.md, "Clone"): a clone never accepts a
// secret of its source, and nothing of it points back at the source's sites.

/**
 * Left behind: credentials of the source (sessions, API keys, OAuth clients, grants and tokens,
 * invitation and password-reset links), its meters (rate and quota counters start at zero: the
 * `quota` and `lock` documents of `site_state`, `CLONE_LEFT_BEHIND_STATE`) and its
 * webhook traffic (deliveries and attempts were the source's; pending ones must not fire from the clone).
 */
export const CLONE_LEFT_BEHIND: ReadonlySet<string> = new Set([
  ACCESS_COLLECTIONS.sessions,
  ACCESS_COLLECTIONS.apiKeys,
  ACCESS_COLLECTIONS.invitations,
  ACCESS_COLLECTIONS.passwordResets,
  ACCESS_COLLECTIONS.counters,
  // Their documents' collections in an archive made before `site_state` (core/site-state.ts).
  SITE_STATE_KINDS.quota,
  SITE_STATE_KINDS.lock,
  OAUTH_COLLECTIONS.clients,
  OAUTH_COLLECTIONS.grants,
  OAUTH_COLLECTIONS.secrets,
  EVENT_COLLECTIONS.deliveries,
  EVENT_COLLECTIONS.attempts,
  EVENT_COLLECTIONS.attemptBatches,
]);

/** The kinds of `site_state` documents a clone leaves behind (the source's quota windows, retention's place, leases). */
const CLONE_LEFT_BEHIND_STATE = [siteStateKindRange('quota'), siteStateKindRange('lock')].map((range) => range._id.$gte);

/** A password hash no password matches (`verifyPassword` knows only `scrypt$…`): a copied account signs in after a reset. */
export const CLONED_PASSWORD = 'cloned$no-password';

/**
 * Every occurrence of a source site id in a string becomes the new site's: the id itself and the
 * compound ids built from it (`<siteId>:<key>`, `site:<siteId>`, export files, design documents,
 * plugin state); object keys too. BSON values (ObjectId, Binary, Date, …) are left as they are.
 * Site ids are 26 characters, 80 of their bits random (core/ids.ts): no other value holds one by chance.
 */
export function remapSiteIds(value: unknown, sites: ReadonlyMap<string, string>): unknown {
  if (typeof value === 'string') return remapString(value, sites);
  if (Array.isArray(value)) return value.map((item) => remapSiteIds(item, sites));
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[remapString(key, sites)] = remapSiteIds(item, sites);
  return out;
}

function remapString(text: string, sites: ReadonlyMap<string, string>): string {
  let out = text;
  for (const [from, to] of sites) if (out.includes(from)) out = out.split(from).join(to);
  return out;
}

/** The rewrite of one collection's documents into the clone: site ids remapped, then that collection's own fix-ups. */
export function cloneRewrite(collection: string, sites: ReadonlyMap<string, string>, secretKey: string, now: Date): Rewrite {
  const webhookSecrets = createWebhookSecretBox(secretKey);
  return (source) => {
    if (collection === SITE_STATE_COLLECTION && CLONE_LEFT_BEHIND_STATE.some((prefix) => String(source._id).startsWith(prefix))) return null;
    const doc = remapSiteIds(source, sites) as Document;
    if (collection === ACCESS_COLLECTIONS.users) {
      // The accounts come along (authorship stays true) without their secrets: no password, no second factor, no platform power.
      delete doc.totp;
      return { ...doc, passwordHash: CLONED_PASSWORD, platformOperator: false };
    }
    if (collection === EVENT_COLLECTIONS.endpoints) {
      // A new signing secret (sealed to the new site and endpoint; shown by a rotation) and paused until an operator resumes it.
      const secretEnc = webhookSecrets.seal(generateWebhookSecret(), secretBinding(String(doc.siteId), String(doc._id)));
      return {
        ...doc,
        secretEnc,
        pausedAt: now,
        pauseReason: 'cloned',
        failingSince: null,
        busyUntil: null,
        heldUntil: null,
        inbox: [],
        inflight: [],
        inflightBatch: null,
      };
    }
    return doc;
  };
}
