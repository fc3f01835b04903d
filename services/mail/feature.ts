import type { Feature } from '../core/feature.ts';
import { mailOperations } from './mail-ops.ts';
import { MAIL_COLLECTION } from './model.ts';

export const mailFeature: Feature = {
  name: 'mail',
  operations: mailOperations,
  indexes: [
    // One mail per event, ever: the outbox's idempotency.
    { collection: MAIL_COLLECTION, keys: { siteId: 1, key: 1 }, options: { unique: true } },
    // The list by state, and the worker's drain of mails left queued (site by site, drain.ts).
    { collection: MAIL_COLLECTION, keys: { siteId: 1, state: 1, _id: 1 } },
    // The list of every state, newest first.
    { collection: MAIL_COLLECTION, keys: { siteId: 1, _id: 1 } },
  ],
};
