import type { Db } from 'mongodb';

export const MAIL_COLLECTION = 'mail_outbox';

/**
 * `queued` (written, workflow started or to be started) → `sent`; a failed attempt is `retrying`
 * (with `lastError`) until one succeeds; `failed` once the workflow gave up (retry by hand).
 */
export type MailState = 'queued' | 'retrying' | 'sent' | 'failed';

/** One outgoing mail. `key` names the event it is for: a second mail for the same event is never written. */
export interface MailDoc {
  _id: string;
  siteId: string;
  key: string;
  template: string;
  from: string;
  to: string;
  subject: string;
  /** The rendered bodies, sealed (they may hold a single-use link); dropped once the mail is sent. */
  body: string | null;
  state: MailState;
  attempts: number;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
  sentAt: Date | null;
}

export const mailCollection = (db: Db) => db.collection<MailDoc>(MAIL_COLLECTION);

/** The `boundTo` of a mail's sealed body: a body copied onto another row does not open. */
export const mailBinding = (mail: Pick<MailDoc, 'siteId' | '_id'>) => `${mail.siteId}/mail/${mail._id}`;
