import type { CloneHooks } from '../core/feature.ts';
import { EVENT_COLLECTIONS } from './model.ts';
import { createWebhookSecretBox, generateWebhookSecret, secretBinding } from './secrets.ts';

/**
 * A clone (docs/backups.md, "Clone") keeps the endpoints, paused with a new signing secret, and
 * none of the source's traffic: its deliveries and attempts must not fire from the clone.
 */
export const eventsClone: CloneHooks = {
  leftBehind: [EVENT_COLLECTIONS.deliveries, EVENT_COLLECTIONS.attempts, EVENT_COLLECTIONS.attemptBatches],
  rewrite(services, collection, now) {
    if (collection !== EVENT_COLLECTIONS.endpoints) return null;
    const secrets = createWebhookSecretBox(services.config.SECRET_KEY);
    // Sealed to the new site and endpoint (a rotation shows one); paused until an operator resumes it.
    return (doc) => ({
      ...doc,
      secretEnc: secrets.seal(generateWebhookSecret(), secretBinding(String(doc.siteId), String(doc._id))),
      pausedAt: now,
      pauseReason: 'cloned',
      failingSince: null,
      busyUntil: null,
      heldUntil: null,
      inbox: [],
      inflight: [],
      inflightBatch: null,
    });
  },
};
